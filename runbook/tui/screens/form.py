"""A small modal form: fields, an OK and a Cancel button. Enter in any field
or OK calls `submit()`; Cancel or escape dismisses with None. Subclasses
compose their fields and say which one has the focus first."""

from __future__ import annotations

from textual import on
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Button, Input


class FormScreen(ModalScreen):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    # Below 30 rows the form drops its spacing (runbook.tcss), so its buttons stay on screen.
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]
    FIRST_FIELD = ""  # the id of the Input focused when the form opens

    def __init__(self, *, blink: bool = True):
        super().__init__()
        self.blink = blink

    def on_mount(self) -> None:
        for field in self.query(Input):
            field.cursor_blink = self.blink  # off for snapshots: a steady screen
        self.query_one(f"#{self.FIRST_FIELD}", Input).focus()

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

    def action_cancel(self) -> None:
        self.dismiss(None)

    def submit(self) -> None:  # pragma: no cover - every form defines it
        raise NotImplementedError
