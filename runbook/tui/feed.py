"""What a stream of event batches changed since the last repaint.

The engine hands the UI batches of events as fast as hosts answer; the screen
repaints on a timer (~100 ms). In between, this only notes what changed
(which hosts of which steps, what is running, what finished), so a repaint
touches just those cells and rows. Plain Python, no textual.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..run.events import (
    Event,
    HostFinished,
    HostOutput,
    HostStarted,
    OperatorDecision,
    PendingActionChanged,
    RunInterrupted,
    StepFinished,
    StepStarted,
)


@dataclass
class Progress:
    step_id: str
    action: str
    total: int
    done: int = 0

    def text(self) -> str:
        return f"{self.action} {self.step_id} {self.done}/{self.total}"


@dataclass
class Changes:
    hosts: dict[str, set[str]] = field(default_factory=dict)  # step -> hosts whose status may have changed
    finished_steps: list[StepFinished] = field(default_factory=list)
    pending: bool = False  # pending actions (reboot owed) changed
    decisions: list[OperatorDecision] = field(default_factory=list)
    interrupted: bool = False

    def __bool__(self) -> bool:
        return bool(self.hosts or self.finished_steps or self.pending or self.decisions or self.interrupted)


class Feed:
    def __init__(self) -> None:
        self.changes = Changes()
        self.progress: Progress | None = None  # the step started last
        # every step started and not yet finished: a verify run of several steps
        # runs them side by side (engine/scheduler.py)
        self.running: dict[tuple[str, str], Progress] = {}
        self.events_seen = 0

    def add(self, batch: list[Event]) -> None:
        ch = self.changes
        self.events_seen += len(batch)
        for ev in batch:
            if isinstance(ev, HostOutput):
                continue  # output goes to the output buffers, not here
            if isinstance(ev, (HostStarted, HostFinished)):
                ch.hosts.setdefault(ev.step_id, set()).add(ev.host)
                if isinstance(ev, HostFinished):
                    p = self.running.get((ev.step_id, ev.action))
                    if p is not None:
                        p.done += 1
            elif isinstance(ev, StepStarted):
                self.progress = Progress(ev.step_id, ev.action, len(ev.hosts))
                self.running[(ev.step_id, ev.action)] = self.progress
            elif isinstance(ev, StepFinished):
                self.running.pop((ev.step_id, ev.action), None)
                ch.finished_steps.append(ev)
                ch.hosts.setdefault(ev.step_id, set())
            elif isinstance(ev, PendingActionChanged):
                ch.pending = True
                ch.hosts.setdefault(ev.step_id, set()).add(ev.host)
            elif isinstance(ev, OperatorDecision):
                ch.decisions.append(ev)
            elif isinstance(ev, RunInterrupted):
                ch.interrupted = True

    def take(self) -> Changes:
        """What changed since the last call (and start afresh)."""
        ch, self.changes = self.changes, Changes()
        return ch

    def activity(self) -> str:
        """The step running (as its hosts come in), or the steps running side by side."""
        if len(self.running) > 1:
            actions = {p.action for p in self.running.values()}
            each = " · ".join(f"{p.step_id} {p.done}/{p.total}" for p in self.running.values())
            return f"{'/'.join(sorted(actions))} {len(self.running)} steps: {each}"
        return self.progress.text() if self.progress else ""

    def running_steps(self) -> list[Progress]:
        """The steps running now (the one started last when none is known to run)."""
        return list(self.running.values()) or ([self.progress] if self.progress else [])

    def stop(self) -> None:
        self.progress = None
        self.running.clear()
