"""Where the real tool outputs are, for every test that reads them: one helper.

    $RUNBOOK_FIXTURES                    if set (a clone anywhere, CI)
    [tool.runbook-tests] fixtures = ...  in pyproject.toml, relative to the repository
                                         (default ../shared/fixtures/real-outputs)

so the suite runs from a clone in any folder, not only beside shared/."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT = "../shared/fixtures/real-outputs"


def configured() -> Path:
    """The fixtures directory as configured (it may not exist)."""
    env = os.environ.get("RUNBOOK_FIXTURES")
    if env:
        return Path(env).expanduser().resolve()
    try:
        with open(REPO / "pyproject.toml", "rb") as f:
            conf = tomllib.load(f)
        rel = conf.get("tool", {}).get("runbook-tests", {}).get("fixtures", DEFAULT)
    except (OSError, tomllib.TOMLDecodeError):
        rel = DEFAULT
    return (REPO / rel).resolve()


def fixtures_root() -> Path:
    """The fixtures directory; a clear error naming what was tried when it is missing."""
    path = configured()
    if not path.is_dir():
        how = (
            "RUNBOOK_FIXTURES"
            if os.environ.get("RUNBOOK_FIXTURES")
            else "[tool.runbook-tests] fixtures in pyproject.toml"
        )
        raise RuntimeError(
            f"real-output fixtures not found at {path} (from {how}; "
            "set RUNBOOK_FIXTURES to the real-outputs directory)"
        )
    return path
