"""The Textual app: wires the session, the bindings, the styles and the
command palette, and pushes the main screen. Nothing else lives here.

`make_app(session)` is the one factory: the CLI (`launch.run_tui`), the
tests and the screenshot script all build the app through it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from .commands import StepCommands, main_screen_commands
from .screens.main import MainScreen


class RunbookApp(App[int]):
    CSS_PATH = Path(__file__).with_name("runbook.tcss")
    TITLE = "runbook"
    COMMANDS = App.COMMANDS | {StepCommands}
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", show=False, priority=True)]
    ENABLE_COMMAND_PALETTE = True

    def __init__(self, session: Any, *, blink: bool = True, repaint_every: float = 0.1,
                 export_output: str | None = None, export_key: str | None = None):
        super().__init__()
        self.session = session
        self.main = MainScreen(session, blink=blink, repaint_every=repaint_every, export_output=export_output,
                               export_key=export_key)

    def on_mount(self) -> None:
        site = self.main.view.header().site
        self.sub_title = site
        self.push_screen(self.main)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from main_screen_commands(screen)
        yield from super().get_system_commands(screen)

    async def action_quit(self) -> None:
        """ctrl+q and the palette's Quit go through the same question as q."""
        self.main.action_quit()


def make_app(session: Any, *, blink: bool = True, repaint_every: float = 0.1,
             export_output: str | None = None, export_key: str | None = None) -> RunbookApp:
    """The app on an open session. `blink=False` for snapshots (a steady cursor);
    export_output / export_key pre-fill the export dialog (e.g. the demo's key)."""
    return RunbookApp(session, blink=blink, repaint_every=repaint_every, export_output=export_output,
                      export_key=export_key)
