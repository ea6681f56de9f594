"""Command palette (ctrl+p): every main-screen action, and jumping to a step
by its id or title."""
from __future__ import annotations

from functools import partial
from typing import Iterable

from textual.app import SystemCommand
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import Screen

from .screens.main import MainScreen

# (title, help, action on the main screen)
ACTIONS = [
    ("Verify step", "verify the selected step on all its hosts", "verify"),
    ("Verify phase", "verify every step of the selected step's phase (what has not passed yet)", "verify_phase"),
    ("Continue the runbook", "verify every step, top to bottom, on what has not passed yet", "verify_rest"),
    ("Verify selected host", "verify the selected step on the selected host only", "verify_host"),
    ("Re-run failed hosts", "verify again the failed, unknown and interrupted hosts", "rerun_failed"),
    ("Re-verify interrupted hosts", "resume: verify again what the last run cut off, in every step",
     "reverify_interrupted"),
    ("Apply", "apply the step on its failing hosts (asks first)", "apply"),
    ("Apply on selected host", "apply the step on the selected host (asks first)", "apply_host"),
    ("Rollback", "restore the values recorded before apply (asks first)", "rollback"),
    ("Rollback selected host", "roll back the selected host (asks first)", "rollback_host"),
    ("Skip", "skip the step on some or all hosts (reason required)", "decide('skip')"),
    ("Waive", "accept the failure on some hosts (reason required)", "decide('waive')"),
    ("Note", "add a note; confirms a manual step (reason required)", "decide('note')"),
    ("Filter hosts", "grid filter: all → failing → unknown", "cycle_filter"),
    ("Export signed log", "write the signed completion log and its report", "export"),
    ("Stop the run", "stop; hosts in flight are recorded as interrupted", "stop"),
    ("Help", "keys and status glyphs", "help"),
]


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
