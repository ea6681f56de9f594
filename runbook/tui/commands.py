"""Command palette (ctrl+p): every main-screen action, and jumping to a step
by its id or title."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from textual.app import SystemCommand
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import Screen

from .keys import palette_entries
from .screens.main import MainScreen

# (title, help, action on the main screen), from the one list of keys (keys.py)
ACTIONS = palette_entries()


def main_screen_commands(screen: Screen) -> Iterable[SystemCommand]:
    if not isinstance(screen, MainScreen):
        return
    for title, help_text, action in ACTIONS:
        yield SystemCommand(title, help_text, partial(screen.run_action, action))


class StepCommands(Provider):
    """`Go to step: link-type-ib — ConnectX ports in InfiniBand mode`."""

    def _steps(self) -> list[tuple[str, str]]:
        screen = self.screen
        if not isinstance(screen, MainScreen):
            return []
        return [(s.id, s.title) for s in screen.session.runbook.steps]

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        screen = self.screen
        for step_id, title in self._steps():
            text = f"Go to step: {step_id} — {title}"
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), partial(screen.go_to_step, step_id), help=title)

    async def discover(self) -> Hits:
        screen = self.screen
        for step_id, title in self._steps():
            yield DiscoveryHit(f"Go to step: {step_id}", partial(screen.go_to_step, step_id), help=title)
