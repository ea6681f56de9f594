"""The state of a run, derived from its events — the one place that decides
what a host's status is for a step. The engine keeps one while it runs, the
store rebuilds one from its journal on open, and the CLI, TUI and exporter
read it. Feeding the same events always gives the same state.

Effective status of (step, host):
- the outcome of its latest verify/apply/rollback (`running` while a command is in flight);
- an active skip makes it `skipped`; an active waiver turns `fail`/`unknown`/`blocked`
  into `waived` (a pass stays a pass: the waiver is not needed then);
- a note on a manual step is its confirmation: `pass`;
- `running` found when a run is reopened becomes `interrupted`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ClusterShell.NodeSet import NodeSet

from .events import (Event, HostFinished, HostKeyRecorded, HostStarted, OperatorDecision,
                            PendingActionChanged, RunInterrupted, RunStarted, StepStarted)
from ..definition.model import Status


@dataclass
class Outcome:
    status: Status
    action: str = "verify"
    reason: str = ""
    exit_status: int | None = None
    command: str = ""
    started: float = 0.0
    ended: float = 0.0
    attempts: int = 0
    step_sha256: str = ""


@dataclass
class Decision:
    kind: str
    step_id: str
    hosts: frozenset[str] | None  # None = every host of the step
    operator: str
    reason: str
    time: float
    expires: float | None = None

    def covers(self, host: str, now: float) -> bool:
        if self.expires is not None and now > self.expires:
            return False
        return self.hosts is None or host in self.hosts


@dataclass
class RunState:
    run: dict[str, Any] = field(default_factory=dict)
    outcomes: dict[tuple[str, str], Outcome] = field(default_factory=dict)
    records: dict[tuple[str, str], Any] = field(default_factory=dict)  # latest verify record
    befores: dict[tuple[str, str], dict] = field(default_factory=dict)
    decisions: list[Decision] = field(default_factory=list)
    pending: dict[tuple[str, str, str], dict] = field(default_factory=dict)  # (step, host, action) -> info, open ones
    host_keys: dict[str, dict] = field(default_factory=dict)
    step_hashes: dict[str, str] = field(default_factory=dict)  # step -> sha256 its latest results were made with
    manual_steps: set[str] = field(default_factory=set)

    # --- feeding -------------------------------------------------------
    def apply(self, ev: Event) -> None:
        if isinstance(ev, RunStarted):
            if not self.run:
                self.run = ev.to_dict()
        elif isinstance(ev, StepStarted):
            if ev.step_sha256:
                self.step_hashes[ev.step_id] = ev.step_sha256
        elif isinstance(ev, HostStarted):
            prev = self.outcomes.get((ev.step_id, ev.host))
            self.outcomes[(ev.step_id, ev.host)] = Outcome(
                Status.RUNNING, ev.action, command=ev.command, started=ev.time,
                attempts=(prev.attempts if prev else 0) + 1, step_sha256=self.step_hashes.get(ev.step_id, ""))
        elif isinstance(ev, HostFinished):
            self._finished(ev)
        elif isinstance(ev, OperatorDecision):
            hosts = frozenset(NodeSet(ev.hosts)) if ev.hosts else None
            self.decisions.append(Decision(ev.kind, ev.step_id, hosts, ev.operator, ev.reason, ev.time, ev.expires))
        elif isinstance(ev, PendingActionChanged):
            key = (ev.step_id, ev.host, ev.action)
            if ev.state == "owed":
                self.pending[key] = {"step_id": ev.step_id, "host": ev.host, "action": ev.action,
                                     "state": "owed", "since": ev.time, "reason": ev.reason}
            else:
                self.pending.pop(key, None)
        elif isinstance(ev, HostKeyRecorded):
            self.host_keys[ev.host] = {"fingerprint": ev.fingerprint, "how": ev.how, "time": ev.time}
        elif isinstance(ev, RunInterrupted):
            self.mark_interrupted()

    def _finished(self, ev: HostFinished) -> None:
        key = (ev.step_id, ev.host)
        prev = self.outcomes.get(key)
        status = Status(ev.status)
        self.outcomes[key] = Outcome(
            status, ev.action, ev.reason, ev.exit_status, ev.command, ev.started, ev.ended,
            attempts=max(prev.attempts if prev else 0, ev.attempt), step_sha256=self.step_hashes.get(ev.step_id, ""))
        if ev.action == "verify" and ev.record is not None:
            self.records[key] = ev.record
        if ev.before is not None:
            self.befores[key] = ev.before

    def mark_interrupted(self) -> dict[str, list[str]]:
        """Every command still `running` (its process died) becomes `interrupted`."""
        hit: dict[str, list[str]] = {}
        for (step, host), out in self.outcomes.items():
            if out.status == Status.RUNNING:
                out.status = Status.INTERRUPTED
                out.reason = "interrupted: the run stopped while this command was in flight"
                hit.setdefault(step, []).append(host)
        return hit

    # --- reading -------------------------------------------------------
    def raw_status(self, step_id: str, host: str) -> Status:
        out = self.outcomes.get((step_id, host))
        return out.status if out else Status.PENDING

    def active_decision(self, step_id: str, host: str, kind: str, now: float | None = None) -> Decision | None:
        now = time.time() if now is None else now
        for d in reversed(self.decisions):
            if d.step_id == step_id and d.kind == kind and d.covers(host, now):
                return d
        return None

    def status(self, step_id: str, host: str, now: float | None = None) -> Status:
        raw = self.raw_status(step_id, host)
        if raw == Status.RUNNING:
            return raw
        if self.active_decision(step_id, host, "skip", now):
            return Status.SKIPPED
        if raw in (Status.FAIL, Status.UNKNOWN, Status.BLOCKED, Status.INTERRUPTED) and \
                self.active_decision(step_id, host, "waive", now):
            return Status.WAIVED
        if step_id in self.manual_steps and raw == Status.PENDING and \
                self.active_decision(step_id, host, "note", now):
            return Status.PASS
        return raw

    def reason(self, step_id: str, host: str) -> str:
        st = self.status(step_id, host)
        out = self.outcomes.get((step_id, host))
        for kind, status in (("skip", Status.SKIPPED), ("waive", Status.WAIVED)):
            if st == status:
                d = self.active_decision(step_id, host, kind)
                base = f" (was {out.status.value}: {out.reason})" if out and out.reason else ""
                return f"{kind} by {d.operator}: {d.reason}{base}"
        if st == Status.PASS and out is None:
            d = self.active_decision(step_id, host, "note")
            return f"confirmed by {d.operator}: {d.reason}" if d else ""
        return out.reason if out else ""

    def outcome(self, step_id: str, host: str) -> Outcome | None:
        return self.outcomes.get((step_id, host))

    def record(self, step_id: str, host: str) -> Any:
        return self.records.get((step_id, host))

    def before(self, step_id: str, host: str) -> dict | None:
        return self.befores.get((step_id, host))

    def pending_for(self, host: str) -> list[dict]:
        return [p for (s, h, a), p in self.pending.items() if h == host]
