"""Shared by the host-parser tests: where the real-output fixtures are, how to
read one, and how to state what a parsed record must contain."""

from __future__ import annotations

import json
from typing import Any

import pytest

from runbook.parsers import ParseError, Reading, parse
from runbook.parsers import read as read_with
from tests.fixtures_path import fixtures_root  # the one fixture locator


def fixture_names(directory: str) -> set[str]:
    return {p.name for p in (fixtures_root() / directory).iterdir() if p.is_file()}


def read(directory: str, name: str) -> str:
    return (fixtures_root() / directory / name).read_text(encoding="utf-8")


class Raises:
    """Expected outcome of a fixture that this parser must refuse."""

    def __init__(self, match: str) -> None:
        self.match = match


class Fragment(dict):
    """Expected values of a fixture that is a published FRAGMENT: the strict parser
    (a step's verify) must refuse it, the lenient one (`runbook parse`) reads these
    values and names what is missing (each of `missing` is a substring of a gap)."""

    def __init__(self, values: dict, missing: tuple[str, ...]) -> None:
        super().__init__(values)
        self.missing = missing


def dig(record: Any, path: str | tuple) -> Any:
    """'gpus.0.name' (or a tuple of keys, for keys that contain dots)."""
    keys = path if isinstance(path, tuple) else path.split(".")
    value = record
    for key in keys:
        if isinstance(value, list):
            value = value[int(key)]
        else:
            assert key in value, f"{key!r} missing on the way to {path!r}; have {sorted(value)}"
            value = value[key]
    return value


def check_fixture(parser: str, directory: str, name: str, expected: dict | Raises) -> Any:
    """Parse one fixture and compare every stated path; the record must be JSON-able."""
    text = read(directory, name)
    if isinstance(expected, Raises):
        with pytest.raises(ParseError, match=expected.match):
            parse(parser, text)
        return None
    if isinstance(expected, Fragment):
        with pytest.raises(ParseError):
            parse(parser, text)
        reading = read_with(parser, text, lenient=True)
        record = reading.record
        for gap in expected.missing:
            assert any(gap in m for m in reading.missing), f"{name}: {gap!r} not in {reading.missing}"
    else:
        record = parse(parser, text)
    assert json.loads(json.dumps(record)) == record, "record is not plain JSON data"
    assert expected, "state at least one expected value per fixture"
    for path, want in expected.items():
        assert dig(record, path) == want, f"{name}: {path}"
    return record


def read_lenient(parser: str, text: str) -> Reading:
    """What `runbook parse` does with a paste: the record and what it lacks."""
    return read_with(parser, text, lenient=True)
