"""The live bars of `runbook run` on a terminal (rich.progress): a bar per step and
action, and over them a line naming the steps running when there are several (a verify
run of several steps runs them side by side: engine/scheduler.py). Only a terminal
gets them (cli/progress.py): without one this module is never imported."""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

from ..engine.detached import clock_text


class JobClockColumn(ProgressColumn):
    """While a step's detached job runs: its elapsed and expected time (docs/long-running-steps.md)."""

    def render(self, task) -> Text:
        clock = task.fields.get("clock")
        if not clock or task.finished:
            return Text("")
        started, expected = clock
        return Text(clock_text(time.time() - started, expected), style="cyan")


class StepsProgress(Progress):
    """The bars, under a line naming the steps running when there are several."""

    running: dict[tuple[str, str], None] = {}  # RunProgress's own, set once made

    def get_renderables(self):
        if len(self.running) > 1:
            names = ", ".join(step for step, _action in self.running)
            yield Text(f"running {len(self.running)} steps: {names}", style="bold", overflow="ellipsis")
        yield self.make_tasks_table(self.tasks)


def live_bars(console: Console, running: dict[tuple[str, str], None]) -> StepsProgress:
    bars = StepsProgress(
        TextColumn("{task.fields[step]:<22}"),
        TextColumn("{task.fields[action]:<8}"),
        BarColumn(bar_width=24),
        TextColumn("{task.completed:>4}/{task.total:<4}"),
        TextColumn("{task.fields[counts]}"),
        TimeElapsedColumn(),
        JobClockColumn(),
        console=console,
        transient=False,
    )
    bars.running = running
    return bars
