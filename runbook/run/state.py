"""The state of a run: its events folded in journal order. A live run holds
exactly one (the store's, fed once each batch is on disk); read-only commands
rebuild one by replaying the journal. Feeding the same events always gives
the same state. Statuses are not decided here but by the rulebook
(rules.py), which this state hands the facts it folded.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..definition.model import Status
from ..inventory.hostsel import unfold
from . import rules
from .events import (
    Event,
    HostFinished,
    HostKeyRecorded,
    HostStarted,
    OperatorDecision,
    PendingActionChanged,
    RunFinished,
    RunInterrupted,
    RunStarted,
    StepStarted,
)


@dataclass
class Outcome:
    """A host's latest outcome in a step: status, reason and what it was judged with."""

    status: Status
    action: str = "verify"
    reason: str = ""
    exit_status: int | None = None
    command: str = ""
    started: float = 0.0
    ended: float = 0.0
    attempts: int = 0
    output_sha256: str = ""  # SHA-256 of its stdout (as the journal records it)
    step_sha256: str = ""  # the definition it was judged with
    inventory_sha256: str = ""  # the inventory it was judged with


@dataclass
class Decision:
    """A skip, waiver or note that an operator recorded."""

    kind: str
    step_id: str
    hosts: frozenset[str] | None  # None = every host of the step
    operator: str
    reason: str
    time: float
    expires: float | None = None
    hosts_text: str = ""  # the NodeSet as the event gave it ("" = whole step)

    def names(self, step_id: str, host: str) -> bool:
        """Whether this decision is about (step, host), active or not."""
        return self.step_id == step_id and (self.hosts is None or host in self.hosts)

    def as_record(self) -> dict[str, Any]:
        """The decision as the progress database and `status --json` show it."""
        return {
            "kind": self.kind,
            "step_id": self.step_id,
            "hosts": self.hosts_text,
            "operator": self.operator,
            "reason": self.reason,
            "time": self.time,
            "expires": self.expires,
        }


@dataclass
class RunState:
    """The run folded from its events: the one rulebook's input and output."""

    run: dict[str, Any] = field(default_factory=dict)
    outcomes: dict[tuple[str, str], Outcome] = field(default_factory=dict)
    # latest verify record: a cache of what the output parses to (the journal does not
    # keep it), so not part of what makes two states equal
    records: dict[tuple[str, str], Any] = field(default_factory=dict, compare=False)
    befores: dict[tuple[str, str], dict] = field(default_factory=dict)
    decisions: list[Decision] = field(default_factory=list)
    pending: dict[tuple[str, str, str], dict] = field(
        default_factory=dict
    )  # (step, host, action) -> the open ones
    host_keys: dict[str, dict] = field(default_factory=dict)
    step_hashes: dict[str, str] = field(
        default_factory=dict
    )  # step -> sha256 its latest results were made with
    step_inventory: dict[str, str] = field(
        default_factory=dict
    )  # step -> inventory sha256 of its latest StepStarted
    step_targets: dict[str, dict[str, None]] = field(default_factory=dict)  # step -> hosts it was started on
    finished: dict[str, Any] | None = None  # the last RunFinished
    interruptions: list[dict[str, Any]] = field(default_factory=list)  # RunInterrupted events
    manual_steps: set[str] = field(default_factory=set)

    # --- feeding -------------------------------------------------------
    def apply(self, ev: Event) -> None:
        if isinstance(ev, RunStarted):
            if not self.run:
                self.run = ev.to_dict()
        elif isinstance(ev, StepStarted):
            if ev.step_sha256:
                self.step_hashes[ev.step_id] = ev.step_sha256
            if ev.inventory_sha256:
                self.step_inventory[ev.step_id] = ev.inventory_sha256
            self.step_targets.setdefault(ev.step_id, {}).update(dict.fromkeys(ev.hosts))
        elif isinstance(ev, HostStarted):
            prev = self.outcomes.get((ev.step_id, ev.host))
            self.outcomes[(ev.step_id, ev.host)] = Outcome(
                Status.RUNNING,
                ev.action,
                command=ev.command,
                started=ev.time,
                attempts=(prev.attempts if prev else 0) + 1,
                **self._judged_with(ev.step_id),
            )
        elif isinstance(ev, HostFinished):
            self._finished(ev)
        elif isinstance(ev, OperatorDecision):
            hosts = unfold(ev.hosts) if ev.hosts else None
            self.decisions.append(
                Decision(ev.kind, ev.step_id, hosts, ev.operator, ev.reason, ev.time, ev.expires, ev.hosts)
            )
        elif isinstance(ev, PendingActionChanged):
            key = (ev.step_id, ev.host, ev.action)
            prev = self.pending.pop(key, None)
            if rules.still_owed(ev.state):  # (re)inserted: the dict keeps the order they opened in
                self.pending[key] = {
                    "step_id": ev.step_id,
                    "host": ev.host,
                    "action": ev.action,
                    "state": ev.state,
                    "reason": ev.reason,
                    "time": ev.time,
                    "since": prev["since"] if prev else ev.time,
                }
        elif isinstance(ev, HostKeyRecorded):
            self.host_keys[ev.host] = {"fingerprint": ev.fingerprint, "how": ev.how, "time": ev.time}
        elif isinstance(ev, RunInterrupted):
            self.interruptions.append(ev.to_dict())
            self.mark_interrupted()
        elif isinstance(ev, RunFinished):
            self.finished = ev.to_dict()

    def _judged_with(self, step_id: str) -> dict[str, str]:
        return {
            "step_sha256": self.step_hashes.get(step_id, ""),
            "inventory_sha256": self.step_inventory.get(step_id, self.run.get("inventory_sha256", "")),
        }

    def _finished(self, ev: HostFinished) -> None:
        key = (ev.step_id, ev.host)
        prev = self.outcomes.get(key)
        status = Status(ev.status)
        self.outcomes[key] = Outcome(
            status,
            ev.action,
            ev.reason,
            ev.exit_status,
            ev.command,
            ev.started,
            ev.ended,
            attempts=max(prev.attempts if prev else 0, ev.attempt),
            output_sha256=ev.stdout_sha256,
            **self._judged_with(ev.step_id),
        )
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
                out.reason = rules.INTERRUPTED_REASON
                hit.setdefault(step, []).append(host)
        return hit

    # --- reading -------------------------------------------------------
    def raw_status(self, step_id: str, host: str) -> Status:
        out = self.outcomes.get((step_id, host))
        return out.status if out else Status.PENDING

    def decisions_for(self, step_id: str, host: str) -> list[Decision]:
        """The decisions naming (step, host), in the order taken."""
        return [d for d in self.decisions if d.names(step_id, host)]

    def judge(self, step_id: str, host: str, at: float | None = None) -> rules.Judgement:
        """Status and reason of (step, host) at time `at` (default: now), by the rulebook."""
        out = self.outcomes.get((step_id, host))
        return rules.judge(
            out.status if out else None,
            out.reason if out else "",
            self.decisions_for(step_id, host),
            manual=step_id in self.manual_steps,
            at=time.time() if at is None else at,
        )

    def status(self, step_id: str, host: str, at: float | None = None) -> Status:
        return self.judge(step_id, host, at).status

    def reason(self, step_id: str, host: str, at: float | None = None) -> str:
        return self.judge(step_id, host, at).reason

    def outcome(self, step_id: str, host: str) -> Outcome | None:
        return self.outcomes.get((step_id, host))

    def record(self, step_id: str, host: str) -> Any:
        return self.records.get((step_id, host))

    def before(self, step_id: str, host: str) -> dict | None:
        return self.befores.get((step_id, host))

    def running(self) -> dict[str, list[str]]:
        """step -> hosts whose command is in flight (per the journal)."""
        out: dict[str, list[str]] = {}
        for (step, host), o in self.outcomes.items():
            if o.status == Status.RUNNING:
                out.setdefault(step, []).append(host)
        return out

    def interrupted(self) -> dict[str, list[str]]:
        """step -> hosts whose command was in flight when its process went away."""
        out: dict[str, list[str]] = {}
        for (step, host), o in self.outcomes.items():
            if o.status == Status.INTERRUPTED:
                out.setdefault(step, []).append(host)
        return out

    def step_hosts(self, step_id: str) -> list[str]:
        """Every host the run knows for a step: started on, with a result, or named by a decision."""
        hosts = dict(self.step_targets.get(step_id, {}))
        hosts.update((h, None) for (s, h) in list(self.outcomes) if s == step_id)
        for d in self.decisions:
            if d.step_id == step_id and d.hosts:
                hosts.update(dict.fromkeys(sorted(d.hosts)))
        return list(hosts)

    def step_ids(self) -> list[str]:
        seen = dict.fromkeys(self.step_targets)
        seen.update(dict.fromkeys(s for s, _h in list(self.outcomes)))
        seen.update(dict.fromkeys(d.step_id for d in self.decisions))
        return list(seen)

    def pending_for(self, host: str) -> list[dict]:
        # a copy first: a UI reads while the engine's thread may fold (workspace/engine_thread.py)
        return [p for (s, h, a), p in list(self.pending.items()) if h == host]
