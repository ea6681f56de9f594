"""Keys and what the glyphs mean."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...glyphs import GLYPH, style
from ..widgets.step_list import FIX_MARK, MANUAL_MARK
from .reason import WAIVE_DAYS

NAVIGATION = [
    ("tab / shift+tab", "next / previous pane"),
    ("↑ ↓ (j k)", "steps; in the grid ← → ↑ ↓ move between hosts"),
    ("ctrl+p", "command palette: every action, and jump to a step by name"),
]


def help_table(keys: list[tuple[str, str]]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for key, what in [*keys, *NAVIGATION]:
        table.add_row(key, what)
    return table


def legend() -> Text:
    text = Text()
    for i, (status, g) in enumerate(GLYPH.items()):
        if i:
            text.append("   ")
        text.append(g, style=style(status))
        text.append(f" {status.replace('_', ' ')}")
    return text


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close")]

    def __init__(self, keys: list[tuple[str, str]]):
        super().__init__()
        self.keys = keys

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog", classes="dialog"):
            yield Static("runbook — keys", id="help-title")
            with VerticalScroll():
                yield Static(help_table(self.keys))
                yield Static(Text("\nstatus glyphs", style="bold"))
                yield Static(legend())
                yield Static(
                    f"{MANUAL_MARK} manual step (confirm it with a note, n)   "
                    f"{FIX_MARK} has a fix (a applies it, asks first)"
                )
                yield Static(
                    Text(
                        "\nProgress is saved as it happens: quitting and reopening loses nothing. "
                        "Failing hosts are shown as NodeSets (gpu[07,31]) ready to paste. "
                        f"A waiver (w) is proposed for the failing hosts and lapses after {WAIVE_DAYS} "
                        "days unless you give it another expiry; its step shows until when.",
                        style="dim",
                    )
                )

    def action_close(self) -> None:
        self.dismiss(None)
