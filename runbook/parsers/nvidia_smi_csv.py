"""`nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]` (also --query-compute-apps).

Record with a header line:
  header: true
  columns: ["index", "utilization.gpu", ...]   header names with the " [unit]" suffix removed
  units:   {"utilization.gpu": "%", ...}        the units the header announced
  rows:    [{column: value}]                    values are strings as printed, with the
           column's unit suffix removed ("26 %" -> "26"); "[N/A]" / "[Not Supported]"
           and friends become null. Strings, not numbers: "12.10" stays a version,
           and the criteria compare numerically wherever both sides read as numbers.
  count:   number of rows (one per GPU, or per sample when the query looped)

Record without a header (`noheader`): header false, columns null, rows as lists
of values in query order - the output alone does not say which column is which,
and a one-column noheader output cannot be told apart from any line of words
(only 'key: value' lines, tables, paths and the like are refused). Prefer the
header form in step files.
"""

from __future__ import annotations

import re

from ._hosttext import fail, lines_of
from .base import ParseError, Parser, Record

# A header cell: a query field name, optionally with its unit: "power.draw [W]".
_HEADER_CELL = re.compile(r"^(?P<name>[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*)(?: \[(?P<unit>[^\]]+)\])?$")
_FOREIGN = re.compile(r"^\s|: |:$|:\.\.|[=|#\t/]|\s{3,}")
_MISSING = re.compile(r"^\[[^\]]*\]$")  # [N/A], [Not Supported], [Unknown Error], ...


def _split(line: str) -> list[str]:
    return [cell.strip() for cell in line.split(",")]


def _value(cell: str, unit: str | None) -> str | None:
    if _MISSING.match(cell):
        return None
    if unit and cell.endswith(" " + unit):
        return cell[: -len(unit) - 1]
    return cell


def parse_nvidia_smi_csv(text: str) -> Record:
    lines = [ln for ln in lines_of(text) if ln.strip()]
    if not lines:
        fail("`nvidia-smi --query-... --format=csv` output", text)
    first = _split(lines[0])
    header = [_HEADER_CELL.match(c) for c in first]
    # `name` alone could be a value too, but real values are never lower-case
    # dotted identifiers *and* followed by lines that are not.
    is_header = all(header) and (len(lines) == 1 or not all(_HEADER_CELL.match(c) for c in _split(lines[1])))
    width = len(first)
    for number, line in enumerate(lines, 1):
        if len(_split(line)) != width:
            raise ParseError(
                f"nvidia-smi csv: line {number} has {len(_split(line))} fields, the first line has "
                f"{width}: {line.strip()[:80]!r} (not `--format=csv` output?)"
            )
    if not is_header:
        # Without a header nothing in the text names the query, so at least
        # refuse what is plainly another tool's output (key: value, tables, ...).
        for line in lines:
            if _FOREIGN.search(re.sub(r"\[[^\]]*\]", "", line)):
                fail("`nvidia-smi --format=csv,noheader` values (comma-separated, no 'key: value')", line)
        rows = [[_value(c, None) for c in _split(ln)] for ln in lines]
        return {"header": False, "columns": None, "units": {}, "rows": rows, "count": len(rows)}
    columns = [m["name"] for m in header]
    units = {m["name"]: m["unit"] for m in header if m["unit"]}
    rows = [
        {col: _value(cell, units.get(col)) for col, cell in zip(columns, _split(line))} for line in lines[1:]
    ]
    return {"header": True, "columns": columns, "units": units, "rows": rows, "count": len(rows)}


PARSERS = [
    Parser(
        name="nvidia-smi-csv",
        reads="nvidia-smi --query-gpu=... --format=csv",
        func=parse_nvidia_smi_csv,
        description="nvidia-smi --query-gpu CSV rows as field -> value records",
    )
]
