"""One line at the top: where we are and how far along."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ..runview import HeaderFacts


def header_text(f: HeaderFacts) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    # Most important first: a narrow terminal cuts the end of the line.
    text.append(f" {f.site or 'site ?'}", style="bold")
    text.append(" │ ")
    text.append(f"{f.steps_passed}/{f.steps_total} steps passed", style="bold")
    # Skipped and waived are not passes: shown beside the count, never in it.
    for n, what in ((f.steps_skipped, "skipped"), (f.steps_waived, "waived")):
        if n:
            text.append(f" · {n} {what}")
    text.append(f" · {f.hosts} hosts")
    for line in f.pending:
        text.append(" │ ")
        text.append(line, style="bold yellow")
    if f.activity:
        text.append(" │ ")
        text.append(f"▶ {f.activity}", style="bold blue")
    text.append(" │ ")
    text.append(f"run {f.run}" if f.run else "new run")
    text.append(f" · {f.operator}" if f.operator else "")
    return text


class HeaderBar(Static):
    def __init__(self, facts: HeaderFacts, *, id: str | None = None):
        super().__init__(header_text(facts), id=id)
        self.facts = facts

    def show(self, facts: HeaderFacts) -> None:
        if facts != self.facts:
            self.facts = facts
            self.update(header_text(facts), layout=False)  # one line, always: no relayout
