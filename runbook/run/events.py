"""The one event stream (docs/architecture.md). The engine yields these plain,
JSON-able dataclasses; the CLI renders them, the TUI turns them into
messages, the store persists them. `to_dict()` / `event_from_dict()` give the
journal form (`type` names the class).

An event is never changed once made, by convention rather than `frozen=True`: a
frozen dataclass sets each field through object.__setattr__, which made a
HostFinished 7x slower to create (3.3 vs 0.5 us; one per host and step) and the
module's import ~1.5x as long (three more generated methods per class, each
compiled at every start: bench/README.md, "After session 16")."""

from __future__ import annotations

import dataclasses
import functools
import time
from dataclasses import dataclass, field
from typing import Any


@functools.cache
def _fields(cls) -> tuple:
    return dataclasses.fields(cls)


def _now() -> float:
    return time.time()


@dataclass
class Event:
    """The base of every event: its journal form."""

    def to_dict(self) -> dict[str, Any]:
        # Shallow on purpose (dataclasses.asdict deep-copies every output and
        # record: measurable per event at 1,000 hosts); nested values are shared.
        d = {f.name: getattr(self, f.name) for f in _fields(type(self))}
        for k, v in d.items():
            if isinstance(v, tuple):
                d[k] = list(v)
        d["type"] = type(self).__name__
        return d


@dataclass
class RunStarted(Event):
    """A run began: who, where, and with which inventory and runbook."""

    run_id: str
    site: str
    operator: str
    tool_version: str
    inventory_sha256: str
    runbook_sha256: str
    time: float = field(default_factory=_now)


@dataclass
class StepStarted(Event):
    """A step began an action on these hosts."""

    step_id: str
    action: str  # verify | apply | rollback | reboot
    hosts: tuple[str, ...]
    step_sha256: str = ""
    time: float = field(default_factory=_now)
    inventory_sha256: str = ""  # the inventory the step ran with (stale detection)


@dataclass
class HostStarted(Event):
    """A host began a step's action (the command as rendered for it)."""

    step_id: str
    action: str
    host: str
    command: str  # exactly as run, after templating
    attempt: int = 1
    time: float = field(default_factory=_now)


@dataclass
class HostOutput(Event):
    """One line of live output. Not persisted line by line (HostFinished carries
    the whole output); it exists for live display."""

    step_id: str
    action: str
    host: str
    stream: str  # stdout | stderr
    line: str


@dataclass
class HostFinished(Event):
    """A host finished a step's action: output, exit status and verdict."""

    step_id: str
    action: str
    host: str
    status: str  # a model.Status value
    reason: str  # one line: expected vs found, or why unknown
    command: str = ""
    exit_status: int | None = None
    stdout: str = ""
    stderr: str = ""
    started: float = 0.0
    ended: float = field(default_factory=_now)
    attempt: int = 1
    record: Any = None  # parsed structured record, when a parser ran
    before: dict[str, Any] | None = None  # values verify measured before apply (for rollback)
    stdout_sha256: str = ""  # filled in by the store (store/journal.py stored_event)
    stderr_sha256: str = ""
    # Step kinds (docs/step-kinds.md): the host that ran the command when it is not
    # this one, the partner(s) of a pair or job, and the link or port the verdict names.
    via: str = ""
    peer: str = ""
    link: str = ""
    # The tests this host took part in (pairs: each pair with its measured value;
    # launch: each job), kept in the journal: unlike `record`, they cannot be
    # parsed again from this host's own output (docs/step-kinds.md).
    tests: tuple[dict[str, Any], ...] = ()


@dataclass
class StepFinished(Event):
    """A step finished an action: its status and the hosts by status."""

    step_id: str
    action: str
    status: str
    counts: dict[str, int]
    failing: str = ""  # folded NodeSet
    unknown: str = ""
    blocked: str = ""
    time: float = field(default_factory=_now)


@dataclass
class PendingActionChanged(Event):
    """A pending action such as a reboot owed (state=owed) or done (state=done)."""

    step_id: str
    host: str
    action: str  # e.g. "reboot"
    state: str  # owed | done | failed
    reason: str = ""
    time: float = field(default_factory=_now)


@dataclass
class HostKeyRecorded(Event):
    """A host key was seen and pinned for a host."""

    host: str
    fingerprint: str  # SHA256:...
    how: str  # known_hosts | pinned (trust on first use)
    time: float = field(default_factory=_now)


@dataclass
class OperatorDecision(Event):
    """skip / waive / note by a person, with a required reason."""

    kind: (
        str  # skip | waive | note (confirms a manual step) | approve | decline (apply/rollback confirmation)
    )
    step_id: str
    hosts: str  # NodeSet ("" = whole step)
    operator: str
    reason: str
    expires: float | None = None
    time: float = field(default_factory=_now)


@dataclass
class RunInterrupted(Event):
    """The run stopped before its end (Ctrl-C, a signal)."""

    reason: str
    time: float = field(default_factory=_now)


@dataclass
class RunFinished(Event):
    """The run ended, with its status."""

    status: str
    time: float = field(default_factory=_now)


EVENT_TYPES: dict[str, type[Event]] = {
    cls.__name__: cls
    for cls in (
        RunStarted,
        StepStarted,
        HostStarted,
        HostOutput,
        HostFinished,
        StepFinished,
        PendingActionChanged,
        HostKeyRecorded,
        OperatorDecision,
        RunInterrupted,
        RunFinished,
    )
}


@functools.cache
def _names(cls) -> frozenset[str]:
    return frozenset(f.name for f in _fields(cls))


def event_from_dict(d: dict[str, Any]) -> Event:
    cls = EVENT_TYPES[d["type"]]
    names = _names(cls)
    kwargs = {k: v for k, v in d.items() if k in names}
    hosts = kwargs.get("hosts")
    if isinstance(hosts, list):
        kwargs["hosts"] = tuple(hosts)
    return cls(**kwargs)
