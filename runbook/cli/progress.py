"""Live progress of `runbook run` on stderr (rich): per step hosts done/total,
pass/fail/unknown counts, elapsed, a bar; and the final summary table.
Percentages are honest: the hosts x steps to do are known up front."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from ..engine.detached import clock_text, duration_text
from ..glyphs import GLYPH, STYLE
from ..run.events import Event, HostFinished, HostStarted, StepFinished, StepStarted

JobOf = Callable[[str, str], "tuple[float, float | None] | None"]  # Session.detached_job


class JobClockColumn(ProgressColumn):
    """While a step's detached job runs: its elapsed and expected time (docs/long-running-steps.md)."""

    def render(self, task) -> Text:
        clock = task.fields.get("clock")
        if not clock or task.finished:
            return Text("")
        started, expected = clock
        return Text(clock_text(time.time() - started, expected), style="cyan")


__all__ = [
    "GLYPH",
    "STYLE",
    "RunProgress",
    "summary_table",
]  # GLYPH/STYLE re-exported: they moved to runbook.glyphs


class _StepsProgress(Progress):
    """The bars, under a line naming the steps running when there are several
    (a verify run of several steps runs them side by side: engine/scheduler.py)."""

    running: dict[tuple[str, str], None] = {}  # RunProgress's own, set once made

    def get_renderables(self):
        if len(self.running) > 1:
            names = ", ".join(step for step, _action in self.running)
            yield Text(f"running {len(self.running)} steps: {names}", style="bold", overflow="ellipsis")
        yield self.make_tasks_table(self.tasks)


class RunProgress:
    def __init__(self, console: Console | None = None, job_of: JobOf | None = None):
        self.console = console or Console(stderr=True)
        self.job_of = job_of
        self.progress = _StepsProgress(
            TextColumn("{task.fields[step]:<22}"),
            TextColumn("{task.fields[action]:<8}"),
            BarColumn(bar_width=24),
            TextColumn("{task.completed:>4}/{task.total:<4}"),
            TextColumn("{task.fields[counts]}"),
            TimeElapsedColumn(),
            JobClockColumn(),
            console=self.console,
            transient=False,
            disable=not self.console.is_terminal,
        )
        self.running: dict[tuple[str, str], None] = {}  # steps started, not finished (in order)
        self.progress.running = self.running
        self.tasks: dict[tuple[str, str], int] = {}
        self.counts: dict[tuple[str, str], dict[str, int]] = {}
        self.started = time.monotonic()

    def __enter__(self):
        self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        self.progress.__exit__(*exc)

    @contextmanager
    def paused(self):
        """Stop redrawing while a question is asked: the live bar would overwrite the prompt."""
        live = self.progress.live
        was_live = live.is_started
        if was_live:
            self.progress.stop()
        try:
            yield
        finally:
            if was_live:
                self.progress.start()

    def _job_started(self, ev: HostStarted) -> None:
        key = (ev.step_id, ev.action)
        clock = self.job_of(ev.step_id, ev.host)
        if clock is None or key not in self.tasks:
            return
        task = next((t for t in self.progress.tasks if t.id == self.tasks[key]), None)
        old = task.fields.get("clock") if task is not None else None
        if old:  # the step's clock: its first start, its longest expected time
            longest = max((e for e in (old[1], clock[1]) if e is not None), default=None)
            clock = (min(old[0], clock[0]), longest)
        elif not self.console.is_terminal:  # no live line: say it once per step
            expected = f", expected about {duration_text(clock[1])}" if clock[1] else ""
            self.console.print(
                f"{ev.step_id:<24} {ev.action:<8} detached job started{expected}",
                highlight=False,
                markup=False,
            )
        self.progress.update(self.tasks[key], clock=clock)

    def _counts_text(self, counts: dict[str, int]) -> str:
        return " ".join(f"[{STYLE[k]}]{GLYPH[k]} {v}[/]" for k, v in sorted(counts.items()) if v)

    def __call__(self, batch: list[Event]) -> None:
        # hosts finished per task in this batch: its bar moved once per batch, not per host
        done: dict[tuple[str, str], int] = {}
        for ev in batch:
            if isinstance(ev, StepStarted):
                self._advance(done)
                key = (ev.step_id, ev.action)
                self.counts[key] = {}
                self.running[key] = None
                self.tasks[key] = self.progress.add_task(
                    "", total=len(ev.hosts), step=ev.step_id, action=ev.action, counts="", clock=None
                )
            elif isinstance(ev, HostStarted) and self.job_of is not None:
                self._job_started(ev)
            elif isinstance(ev, HostFinished):
                key = (ev.step_id, ev.action)
                if key in self.tasks:
                    c = self.counts[key]
                    c[ev.status] = c.get(ev.status, 0) + 1
                    done[key] = done.get(key, 0) + 1
            elif isinstance(ev, StepFinished) and self.console.is_terminal:
                self.running.pop((ev.step_id, ev.action), None)
            elif isinstance(ev, StepFinished):
                self.running.pop((ev.step_id, ev.action), None)
                self._advance(done)
                # No live display (CI, pipes): one line per finished step instead.
                counts = " ".join(f"{GLYPH.get(k, k)} {v}" for k, v in sorted(ev.counts.items()))
                extra = "".join(
                    f"  {k}: {v}"
                    for k, v in (("fail", ev.failing), ("unknown", ev.unknown), ("blocked", ev.blocked))
                    if v
                )
                self.console.print(
                    f"{ev.step_id:<24} {ev.action:<8} {ev.status:<12} {counts}{extra}",
                    highlight=False,
                    markup=False,
                )
        self._advance(done)

    def _advance(self, done: dict[tuple[str, str], int]) -> None:
        for key, n in done.items():
            self.progress.update(self.tasks[key], advance=n, counts=self._counts_text(self.counts[key]))
        done.clear()


def summary_table(doc: dict) -> Table:
    table = Table(title=f"run {doc['run']} — {doc['site']}", show_lines=False)
    for col in ("phase", "step", "status", "hosts", "failing / unknown"):
        table.add_column(col)
    for s in doc["steps"]:
        st = s["status"]
        counts = " ".join(f"{GLYPH.get(k, k)} {v}" for k, v in s["counts"].items())
        bad = "  ".join(
            x
            for x in (
                s["failing"] and f"✖ {s['failing']}",
                s["unknown"] and f"? {s['unknown']}",
                s["blocked"] and f"⊘ {s['blocked']}",
            )
            if x
        )
        table.add_row(s["phase"], s["id"], f"[{STYLE.get(st, '')}]{GLYPH.get(st, '')} {st}[/]", counts, bad)
    return table
