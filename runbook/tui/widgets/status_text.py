"""Glyph + colour for statuses and counts, as rich Text (shared by the widgets).
The glyph carries the meaning; the colour helps (NO_COLOR drops it)."""

from __future__ import annotations

from rich.text import Text

from ...glyphs import glyph, style


def status_text(status: str, label: str = "") -> Text:
    text = Text()
    text.append(glyph(status), style=style(status))  # only the glyph is coloured
    if label:
        text.append(f" {label}")
    return text


def counts_text(counts: tuple[tuple[str, int], ...] | list[tuple[str, int]], sep: str = " ") -> Text:
    text = Text()
    for i, (status, n) in enumerate(counts):
        if i:
            text.append(sep)
        text.append(f"{glyph(status)}{n}", style=style(status))
    return text
