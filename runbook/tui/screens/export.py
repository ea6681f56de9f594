"""Export the signed completion log: which key signs it and where it goes."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, Static

from .form import FormScreen


@dataclass(frozen=True)
class ExportAsked:
    output: str
    sign_key: str | None  # None = the first key in ssh-agent
    identity: str | None


class ExportScreen(FormScreen):
    FIRST_FIELD = "export-output"

    def __init__(self, output: str, sign_key: str = "", *, blink: bool = True):
        super().__init__(blink=blink)
        self.output = output
        self.sign_key = sign_key

    def compose(self) -> ComposeResult:
        with Vertical(id="export-dialog", classes="dialog"):
            yield Static("Export the signed completion log", id="export-title")
            yield Label("log file NAME.json (NAME.json.sig, NAME.md, NAME.html are written beside it)")
            yield Input(self.output, id="export-output")
            yield Label("signing key (empty = the first key in ssh-agent)")
            yield Input(self.sign_key, placeholder="~/.ssh/id_ed25519", id="export-key")
            yield Label("identity (empty = the key's comment, else the operator)")
            yield Input(placeholder="you@example.com", id="export-identity")
            yield Static("", id="export-error")
            with Horizontal(classes="buttons"):
                yield Button("Export", id="ok", variant="primary")
                yield Button("Cancel (esc)", id="cancel")

    def submit(self) -> None:
        output = self.query_one("#export-output", Input).value.strip()
        if not output:
            self.query_one("#export-error", Static).update("say where the log goes")
            return
        key = self.query_one("#export-key", Input).value.strip() or None
        identity = self.query_one("#export-identity", Input).value.strip() or None
        self.dismiss(ExportAsked(output, key, identity))
