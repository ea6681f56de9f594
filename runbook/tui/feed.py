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
        self.progress: Progress | None = None
        self.events_seen = 0

    def add(self, batch: list[Event]) -> None:
        ch = self.changes
        self.events_seen += len(batch)
        for ev in batch:
            if isinstance(ev, HostOutput):
                continue  # output goes to the output buffers, not here
            if isinstance(ev, (HostStarted, HostFinished)):
                ch.hosts.setdefault(ev.step_id, set()).add(ev.host)
                if (
                    isinstance(ev, HostFinished)
                    and self.progress
                    and (ev.step_id, ev.action) == (self.progress.step_id, self.progress.action)
                ):
                    self.progress.done += 1
            elif isinstance(ev, StepStarted):
                self.progress = Progress(ev.step_id, ev.action, len(ev.hosts))
            elif isinstance(ev, StepFinished):
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
        return self.progress.text() if self.progress else ""

    def stop(self) -> None:
        self.progress = None
