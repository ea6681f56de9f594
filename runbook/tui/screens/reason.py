"""Skip, waive or note: on which hosts and why. A reason is required; an
empty one is refused here, before it ever reaches the store."""

from __future__ import annotations

import math
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


# A waiver lapses: pre-filled, and bounded as the CLI's --expires-days is (ten years at most).
WAIVE_DAYS = "30"
MAX_DAYS = 3650


@dataclass(frozen=True)
class ReasonGiven:
    kind: str
    hosts: str  # NodeSet, "" = every host of the step
    reason: str
    expires_days: float | None = None  # waive only


def expiry_days(text: str) -> float:
    """The waiver's lifetime in days, or ValueError with what is wrong."""
    try:
        days = float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number of days") from None
    if not math.isfinite(days) or not 0 < days <= MAX_DAYS:
        raise ValueError(f"a waiver lasts more than 0 and at most {MAX_DAYS} days")
    return days


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
            if self.kind == "waive":
                yield Label("expires after (days; then the hosts count as failing again)")
                yield Input(WAIVE_DAYS, id="reason-days")
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
        days = None
        if self.kind == "waive":
            try:
                days = expiry_days(self.query_one("#reason-days", Input).value.strip())
            except ValueError as exc:
                self.query_one("#reason-error", Static).update(str(exc))
                self.query_one("#reason-days", Input).focus()
                return
        hosts = self.query_one("#reason-hosts", Input).value.strip()
        self.dismiss(ReasonGiven(self.kind, hosts, reason, days))
