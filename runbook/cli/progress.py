"""Progress of `runbook run` on stderr (rich): on a terminal, live bars per step
(cli/live_bars.py: hosts done/total, pass/fail/unknown counts, elapsed); without one
(CI, pipes), one line per finished step. And the final summary table.
Percentages are honest: the hosts x steps to do are known up front."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from ..engine.detached import duration_text
from ..glyphs import GLYPH, STYLE
from ..run.events import Event, HostFinished, HostStarted, StepFinished, StepStarted

if TYPE_CHECKING:
    from .live_bars import StepsProgress

JobOf = Callable[[str, str], "tuple[float, float | None] | None"]  # Session.detached_job

__all__ = [
    "GLYPH",
    "STYLE",
    "RunProgress",
    "summary_table",
]  # GLYPH/STYLE re-exported: they moved to runbook.glyphs


class RunProgress:
    def __init__(self, console: Console | None = None, job_of: JobOf | None = None):
        self.console = console or Console(stderr=True)
        self.job_of = job_of
        self.running: dict[tuple[str, str], None] = {}  # steps started, not finished (in order)
        self.progress: StepsProgress | None = None
        if self.console.is_terminal:
            # Only a terminal gets live bars: without one, rich.progress and the
            # modules it brings are never imported (~5 ms of a cold `runbook run`).
            from .live_bars import live_bars

            self.progress = live_bars(self.console, self.running)
        self.tasks: dict[tuple[str, str], int] = {}
        self.counts: dict[tuple[str, str], dict[str, int]] = {}
        self.announced: set[tuple[str, str]] = set()  # without a terminal: the detached jobs said
        self.started = time.monotonic()

    def __enter__(self):
        if self.progress is not None:
            self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        if self.progress is not None:
            self.progress.__exit__(*exc)

    @contextmanager
    def paused(self):
        """Stop redrawing while a question is asked: the live bar would overwrite the prompt."""
        was_live = self.progress is not None and self.progress.live.is_started
        if was_live:
            self.progress.stop()
        try:
            yield
        finally:
            if was_live:
                self.progress.start()

    def _job_started(self, ev: HostStarted) -> None:
        key = (ev.step_id, ev.action)
        if key not in self.running:
            return
        clock = self.job_of(ev.step_id, ev.host)
        if clock is None:
            return
        if self.progress is None:  # no live line: say it once per step
            if key not in self.announced:
                self.announced.add(key)
                expected = f", expected about {duration_text(clock[1])}" if clock[1] else ""
                self.console.print(
                    f"{ev.step_id:<24} {ev.action:<8} detached job started{expected}",
                    highlight=False,
                    markup=False,
                )
            return
        task = next((t for t in self.progress.tasks if t.id == self.tasks[key]), None)
        old = task.fields.get("clock") if task is not None else None
        if old:  # the step's clock: its first start, its longest expected time
            longest = max((e for e in (old[1], clock[1]) if e is not None), default=None)
            clock = (min(old[0], clock[0]), longest)
        self.progress.update(self.tasks[key], clock=clock)

    def _counts_text(self, counts: dict[str, int]) -> str:
        return " ".join(f"[{STYLE[k]}]{GLYPH[k]} {v}[/]" for k, v in sorted(counts.items()) if v)

    def __call__(self, batch: list[Event]) -> None:
        if self.progress is None:
            self._lines(batch)
            return
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
            elif isinstance(ev, StepFinished):
                self.running.pop((ev.step_id, ev.action), None)
        self._advance(done)

    def _lines(self, batch: list[Event]) -> None:
        """No live display (CI, pipes): one line per finished step instead."""
        for ev in batch:
            if isinstance(ev, StepStarted):
                self.running[(ev.step_id, ev.action)] = None
                self.announced.discard((ev.step_id, ev.action))  # its job is said again if it starts again
            elif isinstance(ev, HostStarted) and self.job_of is not None:
                self._job_started(ev)
            elif isinstance(ev, StepFinished):
                self.running.pop((ev.step_id, ev.action), None)
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
