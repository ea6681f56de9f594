"""Item 9 of issue 16: the suite finds its fixtures through the repository's own
configuration (or $RUNBOOK_FIXTURES), and calls the CLI as `python -m runbook`."""

from __future__ import annotations

import re
from pathlib import Path

from tests import fixtures_path

REPO = Path(__file__).resolve().parents[2]


def test_env_wins_then_pyproject(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RUNBOOK_FIXTURES", str(tmp_path))
    assert fixtures_path.configured() == tmp_path.resolve()
    monkeypatch.delenv("RUNBOOK_FIXTURES")
    assert fixtures_path.configured() == (REPO / "../shared/fixtures/real-outputs").resolve()
    fake = tmp_path / "repo"
    fake.mkdir()
    (fake / "pyproject.toml").write_text('[tool.runbook-tests]\nfixtures = "elsewhere/outs"\n')
    monkeypatch.setattr(fixtures_path, "REPO", fake)
    assert fixtures_path.configured() == (fake / "elsewhere" / "outs").resolve()


def test_no_test_finds_its_fixtures_or_the_cli_another_way() -> None:
    offenders = []
    for path in (REPO / "tests").rglob("*.py"):
        if path.name in ("fixtures_path.py", Path(__file__).name):
            continue
        text = path.read_text()
        if re.search(r'"shared"\s*/\s*"fixtures"', text):
            offenders.append(f"{path}: builds the fixtures path itself")
        if re.search(r'which\(\s*"runbook"\s*\)|\[\s*"runbook"\s*,', text):
            offenders.append(f"{path}: calls `runbook` from PATH, not sys.executable -m runbook")
    assert offenders == []
