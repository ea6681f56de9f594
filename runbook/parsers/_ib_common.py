"""Helpers shared by the InfiniBand / Mellanox parsers (not a parser module:
the leading underscore keeps it out of the registry).

Conventions every IB parser follows, so records from different tools can be
compared with each other:
- GUIDs are normalised to ``0x`` + 16 lower-case hex digits, whatever the tool
  printed (``0x2c9010b7c2ae1``, ``58a2:e103:001a:677e``, ``8f10403961355``).
- LIDs are ints (tools print them in decimal or hex).
- Link rates are the nominal data rate in Gb/s (4X EDR = 100, 4X HDR = 200),
  the same number ``ibstat`` prints as ``Rate:``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .base import ParseError

# Compiled once: GUIDs, counters and widths come on every line of a fabric dump.
_HEX = re.compile(r"[0-9a-fA-F]+")
_INT = re.compile(r"-?\d+")
_WIDTH = re.compile(r"(\d+)[xX]")

# Per-lane nominal data rate (Gb/s) by the lane signalling speed iblinkinfo /
# smpquery print, and by the generation name ibnetdiscover prints.
_LANE_BY_SIGNAL = {
    "2.5": (2.5, "SDR"),
    "5.0": (5, "DDR"),
    "10.0": (10, "QDR"),
    "14.0625": (14, "FDR"),
    "25.78125": (25, "EDR"),
    "53.125": (50, "HDR"),
    "106.25": (100, "NDR"),
    "212.5": (200, "XDR"),
}
_LANE_BY_NAME = {
    "SDR": 2.5,
    "DDR": 5,
    "QDR": 10,
    "FDR10": 10,
    "FDR": 14,
    "EDR": 25,
    "HDR": 50,
    "NDR": 100,
    "XDR": 200,
}


def lines_of(text: str) -> list[str]:
    """Text split into lines, CRLF and non-breaking spaces (pasted output) undone."""
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\xa0", " ").split("\n")


def numbered(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, line without trailing whitespace)."""
    for n, line in enumerate(lines_of(text), 1):
        yield n, line.rstrip()


def shown(line: str, limit: int = 80) -> str:
    line = line.strip()
    return repr(line if len(line) <= limit else line[:limit] + "...")


def first_line(text: str) -> str:
    for line in lines_of(text):
        if line.strip():
            return shown(line)
    return "empty output"


def not_recognised(tool: str, expected: str, text: str) -> ParseError:
    """The text as a whole is not this tool's output."""
    return ParseError(f"{tool}: expected {expected}; found {first_line(text)}")


def bad_line(tool: str, lineno: int, expected: str, line: str) -> ParseError:
    return ParseError(f"{tool}: line {lineno}: expected {expected}; found {shown(line)}")


def guid(value: str) -> str:
    """Normalise a GUID written in any of the tools' styles."""
    raw = value.strip()
    digits = raw[2:] if raw.lower().startswith("0x") else raw
    digits = digits.replace(":", "")
    if not digits or not _HEX.fullmatch(digits):
        raise ParseError(f"not a GUID: {raw!r}")
    number = int(digits, 16)
    if number >= 1 << 64:
        raise ParseError(f"GUID {raw!r} does not fit in 64 bits")
    return f"0x{number:016x}"


def number(value: str) -> int:
    """An int printed in decimal or 0x-hex."""
    value = value.strip()
    return int(value, 16) if value.lower().startswith("0x") else int(value)


def maybe_int(value: str) -> int | str:
    """Decimal ints become ints; anything else (hex masks, words) stays as printed."""
    value = value.strip()
    return int(value) if _INT.fullmatch(value) else value


def tidy_number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def width_lanes(width: str | None) -> int | None:
    m = _WIDTH.fullmatch(width or "")
    return int(m.group(1)) if m else None


def lane_from_signal(speed: str | None) -> tuple[float | None, str | None]:
    """'25.78125 Gbps' -> (25, 'EDR'); '10.0 Gbps (FDR10)' -> (10, 'FDR10')."""
    if not speed:
        return None, None
    if "FDR10" in speed:
        return 10, "FDR10"
    m = re.match(r"([\d.]+)\s*Gbps", speed)
    if not m or m.group(1) not in _LANE_BY_SIGNAL:
        return None, None
    return _LANE_BY_SIGNAL[m.group(1)]


def lane_from_name(name: str | None) -> float | None:
    return _LANE_BY_NAME.get((name or "").upper())


def link_rate(lanes: int | None, lane_gbps: float | None) -> int | float | None:
    if lanes is None or lane_gbps is None:
        return None
    return tidy_number(lanes * lane_gbps)
