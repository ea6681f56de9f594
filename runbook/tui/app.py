"""The Textual app: wires the session, the bindings, the styles and the
command palette, and pushes the main screen. Nothing else lives here.

`make_app(session)` is the one factory: the CLI (`launch.run_tui`), the
tests and the screenshot script all build the app through it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.screen import ModalScreen, Screen

from .commands import StepCommands, main_screen_commands
from .screens.main import MainScreen

MAX_TOASTS = 3  # toasts on screen at once: a new one pushes the oldest out


class RunbookApp(App[int]):
    CSS_PATH = Path(__file__).with_name("runbook.tcss")
    TITLE = "runbook"
    COMMANDS = App.COMMANDS | {StepCommands}
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", show=False, priority=True)]
    ENABLE_COMMAND_PALETTE = True

    def __init__(
        self,
        session: Any,
        *,
        blink: bool = True,
        repaint_every: float = 0.1,
        export_output: str | None = None,
        export_key: str | None = None,
    ):
        super().__init__()
        self.session = session
        self._held: list[tuple[str, dict]] = []  # toasts raised while a dialog was open
        self.main = MainScreen(
            session,
            blink=blink,
            repaint_every=repaint_every,
            export_output=export_output,
            export_key=export_key,
        )

    def on_mount(self) -> None:
        site = self.main.view.header().site
        self.sub_title = site
        self.push_screen(self.main)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Toasts never cover a dialog (they wait until it is closed, then show for their
        full time) and never stack deep (the oldest goes). Markup off: messages carry
        host names and commands, whose brackets are text."""
        kw = dict(title=title, severity=severity, timeout=timeout, markup=False)
        if self._dialog_open():
            self._held.append((message, kw))
            return
        self._make_room(1)
        super().notify(message, **kw)

    def _dialog_open(self) -> bool:
        try:
            return isinstance(self.screen, ModalScreen)
        except Exception:
            return False

    def _make_room(self, n: int) -> None:
        # Textual keeps no public count of the toasts shown; its collection is read here.
        shown = list(self._notifications)
        for old in shown[: max(0, len(shown) + n - MAX_TOASTS)]:
            self._unnotify(old, refresh=False)

    def show_held_toasts(self) -> None:
        """Called when the main screen is back on top: the toasts a dialog held back."""
        held, self._held = self._held[-MAX_TOASTS:], []
        for message, kw in held:
            self._make_room(1)
            super().notify(message, **kw)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from main_screen_commands(screen)
        yield from super().get_system_commands(screen)

    async def action_quit(self) -> None:
        """ctrl+q and the palette's Quit go through the same question as q."""
        self.main.action_quit()


def make_app(
    session: Any,
    *,
    blink: bool = True,
    repaint_every: float = 0.1,
    export_output: str | None = None,
    export_key: str | None = None,
) -> RunbookApp:
    """The app on an open session. `blink=False` for snapshots (a steady cursor);
    export_output / export_key pre-fill the export dialog (e.g. the demo's key)."""
    return RunbookApp(
        session, blink=blink, repaint_every=repaint_every, export_output=export_output, export_key=export_key
    )
