"""Quit while commands run: the question, with the run's progress drawn live
under it, so the engineer sees what quitting would cut off right now."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from .ask import AskScreen

REFRESH_EVERY = 0.25  # seconds


class QuitScreen(AskScreen):
    def __init__(
        self, question: str, progress: Callable[[], str], *, yes: str = "Quit", no: str = "Keep running"
    ):
        super().__init__(question, yes=yes, no=no)
        self.progress = progress

    def compose(self) -> ComposeResult:
        with Vertical(id="ask-dialog", classes="dialog"):
            yield Static(self.question, id="ask-question")
            yield Static(self.progress(), id="quit-progress")
            with Horizontal(classes="buttons"):
                yield Button(f"{self.yes} (y)", id="yes", variant="warning")
                yield Button(f"{self.no} (n)", id="no", variant="primary")

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(REFRESH_EVERY, self.refresh_progress)

    def refresh_progress(self) -> None:
        self.query_one("#quit-progress", Static).update(self.progress())
