"""Skip, waive or note: on which hosts and why. A reason is required; an
empty one is refused here, before it ever reaches the store."""
from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, Static

from .form import FormScreen

WHAT = {
    "skip": "Skip: these hosts will not run this step (they count as skipped, not passed).",
    "waive": "Waive: accept the failure on these hosts, under your name.",
    "note": "Note: recorded in the log (on a manual step it is the confirmation).",
}


@dataclass(frozen=True)
class ReasonGiven:
    kind: str
    hosts: str  # NodeSet, "" = every host of the step
    reason: str


class ReasonScreen(FormScreen):
    FIRST_FIELD = "reason-text"

    def __init__(self, kind: str, step_id: str, hosts: str = "", *, blink: bool = True):
        super().__init__(blink=blink)
        self.kind = kind
        self.step_id = step_id
        self.default_hosts = hosts

    def compose(self) -> ComposeResult:
        with Vertical(id="reason-dialog", classes="dialog"):
            yield Static(f"{self.kind} {self.step_id}", id="reason-title")
            yield Static(WHAT.get(self.kind, ""), id="reason-what")
            yield Label("hosts (NodeSet; empty = every host of the step)")
            yield Input(self.default_hosts, placeholder="every host of the step", id="reason-hosts")
            yield Label("reason (required)")
            yield Input(placeholder="why", id="reason-text")
            yield Static("", id="reason-error")
            with Horizontal(classes="buttons"):
                yield Button(f"Record {self.kind}", id="ok", variant="primary")
                yield Button("Cancel (esc)", id="cancel")

    def submit(self) -> None:
        reason = self.query_one("#reason-text", Input).value.strip()
        if not reason:
            self.query_one("#reason-error", Static).update(f"a reason is required to {self.kind}")
            self.query_one("#reason-text", Input).focus()
            return
        hosts = self.query_one("#reason-hosts", Input).value.strip()
        self.dismiss(ReasonGiven(self.kind, hosts, reason))

