"""The selected host: its status, why (expected vs found), the values
recorded before an apply, what it still owes. (The command as it ran heads
the output log below.)"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ...textfmt import kv_text
from ..runview import HostFacts
from .status_text import status_text


def reason_text(f: HostFacts | None) -> Text:
    if f is None:
        return Text("no host selected", style="dim")
    text = status_text(f.status)
    text.append(f" {f.host}", style="bold")
    text.append(f"  {f.status}")
    if f.action:
        text.append(f" · {f.action}")
    if f.exit_status is not None:
        text.append(f" · exit {f.exit_status}")
    for p in f.pending:
        text.append(f" · {p}", style="bold yellow")
    if f.reason:
        text.append("\n")
        text.append(f.reason)
    if f.before:
        text.append("\nbefore: ", style="dim")
        text.append(kv_text(f.before), style="dim")  # nested values as key=value, never a repr
    return text


class HostReason(Static):
    def __init__(self, facts: HostFacts | None = None, *, id: str | None = None):
        super().__init__(reason_text(facts), id=id)
        self.facts = facts

    def show(self, facts: HostFacts | None) -> None:
        if facts != self.facts:
            self.facts = facts
            self.update(reason_text(facts), layout=False)  # a fixed height (runbook.tcss)
