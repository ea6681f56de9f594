"""The runbook as phases and steps, each with its status glyph and counts, so
the state of the whole delivery reads without opening anything.

Prompts are plain Text laid out to the list's width (id left, counts right):
cheap to draw, because a prompt change makes the OptionList redraw them all.
The highlighted step is `step_id` (from the reactive `highlighted`: watch it);
Enter on a step posts `StepChosen`."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import events, on
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ..runview import StepRow
from .status_text import counts_text, status_text

PHASE_PREFIX = "phase:"


# Marks after a step's id: a manual step (confirmed with a note), a step with a fix (apply).
MANUAL_MARK = "✎"
FIX_MARK = "⚒"


def step_prompt(row: StepRow, width: int) -> Text:
    marks = (f" {MANUAL_MARK}" if row.manual else "") + (f" {FIX_MARK}" if row.fixable else "")
    left = status_text(row.status, row.step_id + marks)
    right = counts_text(row.counts)
    room = max(width, 8) - right.cell_len - 1
    if left.cell_len > room:
        left.truncate(max(room - 1, 1))
        left.append("…")
    left.append(" " * (room - left.cell_len + 1))
    left.append_text(right)
    left.no_wrap = True
    return left


def phase_prompt(title: str, width: int) -> Text:
    text = Text(title, style="bold", no_wrap=True)
    if text.cell_len > max(width, 4):
        text.truncate(max(width, 4) - 1)
        text.append("…")
    return text


class StepList(OptionList):
    BINDINGS = [
        Binding("k", "cursor_up", "Up", show=False),
        Binding("j", "cursor_down", "Down", show=False),
    ]

    @dataclass
    class StepChosen(Message):
        step_id: str

    def __init__(self, rows: list[StepRow], *, id: str | None = None):
        self.rows: dict[str, StepRow] = {r.step_id: r for r in rows}
        self._width = 40
        super().__init__(*self._build_options(), id=id)

    def _build_options(self) -> list[Option]:
        options: list[Option] = []
        phase = None
        for row in self.rows.values():
            if row.phase != phase:
                phase = row.phase
                options.append(
                    Option(
                        phase_prompt(row.phase_title or row.phase, self._width),
                        id=PHASE_PREFIX + phase,
                        disabled=True,
                    )
                )
            options.append(Option(step_prompt(row, self._width), id=row.step_id))
        return options

    def on_resize(self, _event: events.Resize) -> None:
        width = self.scrollable_content_region.width - 1  # the option's own padding
        if width > 0 and width != self._width:
            self._width = width
            for option in self._build_options():
                self.replace_option_prompt(option.id, option.prompt)

    @property
    def step_id(self) -> str | None:
        """The highlighted step."""
        if self.highlighted is None:
            return None
        option_id = self.get_option_at_index(self.highlighted).id
        return None if option_id is None or option_id.startswith(PHASE_PREFIX) else option_id

    def show(self, rows: list[StepRow]) -> None:
        """Redraw only the steps whose status or counts changed."""
        for row in rows:
            if self.rows.get(row.step_id) != row:
                self.rows[row.step_id] = row
                self.replace_option_prompt(row.step_id, step_prompt(row, self._width))

    def go_to(self, step_id: str) -> None:
        self.highlighted = self.get_option_index(step_id)

    @on(OptionList.OptionHighlighted)
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()  # watch `highlighted` instead: no queue hop

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id and not event.option.id.startswith(PHASE_PREFIX):
            self.post_message(self.StepChosen(event.option.id))
