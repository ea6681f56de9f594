"""`nvbandwidth [-t TESTCASE ...]` (NVIDIA's memory-copy bandwidth tool).

Newer versions print a preamble (`nvbandwidth Version: v0.4`, `Driver Version:`,
one `Device N: NAME` line per GPU); early ones print only the testcases. Each
testcase is:

    Running host_to_device_memcpy_ce.
    memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)
              0         1   ...                      column labels (GPU ids)
    0     26.03     25.94   ...                      one row per source (CPU = row 0)
    SUM host_to_device_memcpy_ce 207.98              v0.4 and later

Record:
  version, driver_version: str | None (preamble), devices: {id: name}
  testcases: {name: {title, columns: [str], rows: {label: [float | None]}, sum: float | None}}
  "N/A" cells (the diagonal of GPU<->GPU matrices) become null; old versions print 0.00 there.
"""
from __future__ import annotations

import re

from ._hosttext import fail, lines_of
from .base import ParseError, Parser, Record

_RUNNING = re.compile(r"^Running (?P<name>[a-z0-9_]+)\.\s*$")
_TITLE = re.compile(r"^(?:memcpy|memory)\b.*bandwidth \(GB/s\)")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")


def _cell(text: str, line: str) -> float | None:
    if text == "N/A":
        return None
    if not _NUMBER.match(text):
        raise ParseError(f"nvbandwidth: {text!r} is not a bandwidth in {line.strip()!r}")
    return float(text)


def parse_nvbandwidth(text: str) -> Record:
    lines = lines_of(text)
    record: Record = {"version": None, "driver_version": None, "devices": {}, "testcases": {}}
    current: dict | None = None
    expect_columns = False
    for line in lines:
        s = line.strip()
        if not s:
            continue
        if m := re.match(r"^nvbandwidth Version:\s*(\S+)", s):
            record["version"] = m.group(1)
        elif m := re.match(r"^Driver Version:\s*(\S+)", s):
            record["driver_version"] = m.group(1)
        elif m := re.match(r"^Device (\d+):\s*(.+)$", s):
            record["devices"][m.group(1)] = m.group(2).strip()
        elif m := _RUNNING.match(s):
            current = {"title": None, "columns": [], "rows": {}, "sum": None}
            record["testcases"][m.group("name")] = current
            expect_columns = False
        elif current is not None and current["title"] is None and _TITLE.match(s):
            current["title"] = s
            expect_columns = True
        elif current is not None and expect_columns and re.fullmatch(r"\d+(\s+\d+)*", s):
            current["columns"] = s.split()
            expect_columns = False
        elif current is not None and current["columns"] and re.match(r"^\d+\s", s):
            label, *cells = s.split()
            if len(cells) != len(current["columns"]):
                raise ParseError(f"nvbandwidth: row {label} has {len(cells)} values for "
                                 f"{len(current['columns'])} columns: {s[:80]!r}")
            current["rows"][label] = [_cell(c, s) for c in cells]
        elif m := re.match(r"^SUM (\S+) (\S+)$", s):
            case = record["testcases"].get(m.group(1))
            if case is not None and _NUMBER.match(m.group(2)):
                case["sum"] = float(m.group(2))
    if not record["testcases"]:
        fail("nvbandwidth output ('Running <testcase>.' followed by a bandwidth matrix)", text)
    for name, case in record["testcases"].items():
        if not case["rows"]:
            raise ParseError(f"nvbandwidth: testcase {name} has no bandwidth matrix (cut off, or it failed)")
    return record


PARSERS = [Parser(name="nvbandwidth", reads="nvbandwidth -t TESTCASE", func=parse_nvbandwidth)]
