"""Every fixture file of the IB directories has a stated-values case, every
record is JSON, and every IB parser refuses every other tool's fixture."""

import importlib
import json
import pkgutil
from pathlib import Path

import pytest

from runbook.parsers import ParseError, names, parse

from . import _fixtures
from ._fixtures import ALSO_READS, DIRECTORIES, root


def _all_cases() -> dict:
    cases = {}
    package = Path(__file__).parent
    for info in pkgutil.iter_modules([str(package)]):
        if info.name.startswith("test_") and info.name != "test_coverage":
            module = importlib.import_module(f"{__package__}.{info.name}")
            for key in getattr(module, "CASES", {}):
                assert key not in cases, f"{key} has two cases"
                cases[key] = module
    return cases


def _fixture_files(directory: str) -> list[str]:
    return sorted(p.name for p in (root() / directory).iterdir() if p.is_file())


def test_fixture_root_exists():
    assert root().is_dir(), f"fixtures not found at {root()} (set RUNBOOK_FIXTURES)"


@pytest.mark.parametrize("directory", sorted(DIRECTORIES))
def test_every_fixture_file_has_a_case(directory):
    present = set(_fixture_files(directory))
    stated = {name for (d, name) in _all_cases() if d == directory}
    assert present, f"no fixture files in {directory}"
    assert present - stated == set(), (
        f"fixture files with no expected values stated: {sorted(present - stated)}"
    )
    assert stated - present == set(), f"cases for files that do not exist: {sorted(stated - present)}"


def test_every_ib_parser_is_registered():
    assert set(DIRECTORIES.values()) <= set(names())


@pytest.mark.parametrize("key", sorted(_all_cases()), ids=lambda k: f"{k[0]}/{k[1]}")
def test_record_is_json(key):
    record = _fixtures.parsed(*key)
    assert json.loads(json.dumps(record)) == record


def _foreign_files(parser: str) -> list[Path]:
    readable = {d for d, p in DIRECTORIES.items() if p == parser} | ALSO_READS.get(parser, set())
    return sorted(
        p
        for d in root().iterdir()
        if d.is_dir() and d.name not in readable
        for p in d.iterdir()
        if p.is_file()
    )


@pytest.mark.parametrize("parser", sorted(set(DIRECTORIES.values())))
def test_parser_refuses_other_tools_output(parser):
    foreign = _foreign_files(parser)
    assert len(foreign) > 50
    accepted = []
    for path in foreign:
        try:
            parse(parser, path.read_text(encoding="utf-8", errors="replace"))
            accepted.append(f"{path.parent.name}/{path.name}")
        except ParseError as exc:
            assert str(exc).startswith(parser.split("-")[0]) or parser in str(exc), str(exc)
    assert accepted == [], f"{parser} did not refuse: {accepted}"


@pytest.mark.parametrize("parser", sorted(set(DIRECTORIES.values())))
def test_empty_output_is_refused(parser):
    with pytest.raises(ParseError, match="empty output|expected"):
        parse(parser, "")
