"""Confirm what can hurt: apply and rollback show the exact commands, the
hosts they will touch and (rollback) the values they restore, and wait for a
yes. The safe answer has the focus."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Static

from ...inventory.load import fold
from ...textfmt import kv_text
from .ask import YesNoScreen


def grouped(per_host: dict[str, str]) -> list[tuple[str, str]]:
    """Hosts with the same value folded together: [(NodeSet, value)]."""
    by_value: dict[str, list[str]] = {}
    for host, value in per_host.items():
        by_value.setdefault(value, []).append(host)
    return [(fold(hosts), value) for value, hosts in by_value.items()]


def _values(d: dict[str, Any] | None) -> str:
    """key=value, nested values as dotted paths (never a Python repr)."""
    if not d:
        return "(nothing recorded)"
    return kv_text(d)


class ConfirmScreen(YesNoScreen):
    BINDINGS = [
        Binding("y", "answer(True)", "Yes, run it"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(
        self,
        action: str,
        step_id: str,
        title: str,
        hosts: list[str],
        commands: dict[str, str],
        *,
        befores: dict[str, dict | None] | None = None,
        then: str | None = None,
    ):
        super().__init__()
        self.action = action
        self.step_id = step_id
        self.step_title = title
        self.hosts = list(hosts)
        self.commands = dict(commands)
        self.befores = befores
        self.then = then

    def compose(self) -> ComposeResult:
        n = len(self.hosts)
        with Vertical(id="confirm-dialog", classes="dialog"):
            head = Text()
            head.append(f"{self.action} {self.step_id}", style="bold")
            head.append(f" on {n} host{'s' if n != 1 else ''}: {fold(self.hosts)}")
            yield Static(head, id="confirm-title")
            yield Static(self.step_title, id="confirm-subtitle")
            with VerticalScroll(id="confirm-body"):
                yield Static(self._body(), id="confirm-commands")
            with Horizontal(id="confirm-buttons", classes="buttons"):
                yield Button(f"Run {self.action} (y)", id="yes", variant="error")
                yield Button("Cancel (n)", id="no", variant="primary")

    def _body(self) -> Text:
        text = Text()
        text.append("commands, exactly as they will run:\n", style="dim")
        for hosts, command in grouped(self.commands):
            text.append(f"{hosts}", style="bold")
            text.append(f"  $ {command}\n")
        if self.then:
            text.append(f"then: {self.then} ", style="bold yellow")
            text.append("(the hosts are rebooted and verified again when they are back)\n", style="yellow")
        if self.befores is not None:
            text.append("restores the values recorded before the apply:\n", style="dim")
            for hosts, values in grouped({h: _values(b) for h, b in self.befores.items()}):
                text.append(f"{hosts}", style="bold")
                text.append(f"  {values}\n", style="cyan")
        return text
