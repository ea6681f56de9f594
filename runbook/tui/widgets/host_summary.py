"""Above the grid: the filter in use and the hosts that need attention as
folded NodeSets (failing, not assessed, blocked), ready to paste into --hosts."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ...glyphs import glyph, style

Groups = tuple[tuple[str, str], ...]  # (status whose glyph leads, folded NodeSet)


def summary_text(filter_name: str, shown: int, total: int, groups: Groups) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"hosts: {filter_name}", style="bold")
    text.append(f" ({shown}/{total})", style="dim")
    for status, hosts in groups:
        if hosts:
            text.append("  ")
            text.append(f"{glyph(status)} {hosts}", style=style(status))
    if not any(hosts for _s, hosts in groups):
        text.append("  nothing failing", style="dim")
    return text


class HostSummary(Static):
    def __init__(self, *, id: str | None = None):
        super().__init__("", id=id)
        self._last: tuple | None = None

    def show(self, filter_name: str, shown: int, total: int, groups: Groups) -> None:
        key = (filter_name, shown, total, groups)
        if key != self._last:
            self._last = key
            self.update(summary_text(*key), layout=False)  # one line, always: no relayout
