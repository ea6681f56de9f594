"""Live progress of `runbook run` on stderr (rich): per step hosts done/total,
pass/fail/unknown counts, elapsed, a bar; and the final summary table.
Percentages are honest: the hosts x steps to do are known up front."""

from __future__ import annotations

import time
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..glyphs import GLYPH, STYLE
from ..run.events import Event, HostFinished, StepFinished, StepStarted

__all__ = [
    "GLYPH",
    "STYLE",
    "RunProgress",
    "summary_table",
]  # GLYPH/STYLE re-exported: they moved to runbook.glyphs


class RunProgress:
    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self.progress = Progress(
            TextColumn("{task.fields[step]:<22}"),
            TextColumn("{task.fields[action]:<8}"),
            BarColumn(bar_width=24),
            TextColumn("{task.completed:>4}/{task.total:<4}"),
            TextColumn("{task.fields[counts]}"),
            TimeElapsedColumn(),
            console=self.console,
            transient=False,
            disable=not self.console.is_terminal,
        )
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

    def _counts_text(self, counts: dict[str, int]) -> str:
        return " ".join(f"[{STYLE[k]}]{GLYPH[k]} {v}[/]" for k, v in sorted(counts.items()) if v)

    def __call__(self, batch: list[Event]) -> None:
        for ev in batch:
            if isinstance(ev, StepStarted):
                key = (ev.step_id, ev.action)
                self.counts[key] = {}
                self.tasks[key] = self.progress.add_task(
                    "", total=len(ev.hosts), step=ev.step_id, action=ev.action, counts=""
                )
            elif isinstance(ev, HostFinished):
                key = (ev.step_id, ev.action)
                if key in self.tasks:
                    c = self.counts[key]
                    c[ev.status] = c.get(ev.status, 0) + 1
                    self.progress.update(self.tasks[key], advance=1, counts=self._counts_text(c))
            elif isinstance(ev, StepFinished) and not self.console.is_terminal:
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
