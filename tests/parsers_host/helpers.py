"""Shared by the host-parser tests: where the real-output fixtures are, how to
read one, and how to state what a parsed record must contain."""
from __future__ import annotations

import json
from typing import Any

import pytest

from runbook.parsers import ParseError, parse
from tests.fixtures_path import fixtures_root  # the one fixture locator


def fixture_names(directory: str) -> set[str]:
    return {p.name for p in (fixtures_root() / directory).iterdir() if p.is_file()}


def read(directory: str, name: str) -> str:
    return (fixtures_root() / directory / name).read_text(encoding="utf-8")


class Raises:
    """Expected outcome of a fixture that this parser must refuse."""

    def __init__(self, match: str) -> None:
        self.match = match


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
    record = parse(parser, text)
    assert json.loads(json.dumps(record)) == record, "record is not plain JSON data"
    assert expected, "state at least one expected value per fixture"
    for path, want in expected.items():
        assert dig(record, path) == want, f"{name}: {path}"
    return record
