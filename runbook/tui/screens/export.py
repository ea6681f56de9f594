"""Export the signed completion log: which key signs it and where it goes."""
from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static


@dataclass(frozen=True)
class ExportAsked:
    output: str
    sign_key: str | None  # None = the first key in ssh-agent
    identity: str | None


class ExportScreen(ModalScreen["ExportAsked | None"]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, output: str, sign_key: str = "", *, blink: bool = True):
        super().__init__()
        self.output = output
        self.sign_key = sign_key
        self.blink = blink

    def compose(self) -> ComposeResult:
        with Vertical(id="export-dialog", classes="dialog"):
            yield Static("Export the signed completion log", id="export-title")
            yield Label("log file (FILE.sig, FILE.md, FILE.html are written beside it)")
            yield Input(self.output, id="export-output")
            yield Label("signing key (empty = the first key in ssh-agent)")
            yield Input(self.sign_key, placeholder="~/.ssh/id_ed25519", id="export-key")
            yield Label("identity (empty = the key's comment, else the operator)")
            yield Input(placeholder="you@example.com", id="export-identity")
            yield Static("", id="export-error")
            with Horizontal(classes="buttons"):
                yield Button("Export", id="ok", variant="primary")
                yield Button("Cancel (esc)", id="cancel")

    def on_mount(self) -> None:
        for field in self.query(Input):
            field.cursor_blink = self.blink  # off for snapshots: a steady screen
        self.query_one("#export-output", Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.submit()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "ok":
            self.submit()
        else:
            self.dismiss(None)

    def submit(self) -> None:
        output = self.query_one("#export-output", Input).value.strip()
        if not output:
            self.query_one("#export-error", Static).update("say where the log goes")
            return
        key = self.query_one("#export-key", Input).value.strip() or None
        identity = self.query_one("#export-identity", Input).value.strip() or None
        self.dismiss(ExportAsked(output, key, identity))

    def action_cancel(self) -> None:
        self.dismiss(None)
