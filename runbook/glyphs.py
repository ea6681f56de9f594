"""How a status looks on a terminal: one glyph and one colour per status.

Shared by the CLI progress output and the TUI, so a `✖` means the same thing
everywhere. The glyph alone carries the meaning (monochrome terminals,
NO_COLOR, colour-blind readers); the colour only helps."""

from __future__ import annotations

GLYPH = {
    "pass": "✔",
    "fail": "✖",
    "unknown": "?",
    "blocked": "⊘",
    "waived": "≈",
    "skipped": "↷",
    "interrupted": "!",
    "pending": "·",
    "running": "…",
    "rolled_back": "↺",
    "not_applicable": "–",
}
STYLE = {
    "pass": "green",
    "fail": "red",
    "unknown": "yellow",
    "blocked": "magenta",
    "waived": "cyan",
    "skipped": "dim",
    "interrupted": "yellow",
    "pending": "dim",
    "running": "blue",
    "rolled_back": "cyan",
    "not_applicable": "dim",
}

# The order counts are listed in: what needs attention first.
COUNT_ORDER = (
    "fail",
    "unknown",
    "interrupted",
    "blocked",
    "running",
    "pending",
    "rolled_back",
    "waived",
    "skipped",
    "pass",
    "not_applicable",
)


def glyph(status: object) -> str:
    return GLYPH.get(str(status), "?")


def style(status: object) -> str:
    return STYLE.get(str(status), "")
