"""No parser ever fails with anything but ParseError: on garbage, and on every real
fixture cut short at any line (what a truncated paste looks like), in both modes."""

from __future__ import annotations

import json

import pytest

from runbook.parsers import ParseError, get, names

from .helpers import fixtures_root

GARBAGE = [
    "",
    "   \n\t\n",
    "\x00\x01\x02 binary",
    "x" * 5000,
    "{",
    "[1, 2",
    '{"a": [1, {"b": null}]}',
    "| | |\n+--+\n|=|\n",
    "::::\n: : :\n",
    "#\n# size\n#",
    "0: \n[1,0]<stdout>:\n",
    "Device #1:\n",
    "GPU 0000:00:00.0\n",
    "CA 'x'\n\tPort 1:\n",
    "Running x.\n",
    "ééé ✓ 中文\n",
]


@pytest.mark.parametrize("name", names())
def test_garbage_gives_parse_error_or_a_record(name):
    parser = get(name)
    for text in GARBAGE:
        for lenient in (False, True):
            try:
                reading = parser.read(text, lenient=lenient)
            except ParseError:
                continue
            json.dumps(reading.record)


def _fixture_texts():
    root = fixtures_root()
    return [
        p.read_text(encoding="utf-8", errors="replace")
        for d in sorted(root.iterdir())
        if d.is_dir()
        for p in sorted(d.iterdir())
        if p.is_file()
    ]


@pytest.mark.parametrize("name", names())
def test_every_fixture_cut_short_gives_parse_error_or_a_record(name):
    parser = get(name)
    for text in _fixture_texts():
        lines = text.splitlines(keepends=True)
        step = max(1, len(lines) // 12)
        for cut in range(1, len(lines), step):
            for lenient in (False, True):
                try:
                    parser.read("".join(lines[:cut]), lenient=lenient)
                except ParseError:
                    pass
