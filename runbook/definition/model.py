"""The plain data the rest of the program passes around. No I/O, no logic
beyond small derived properties: loaders build these, the engine runs them,
the store and exporter record them."""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Status(str, Enum):
    """Per host and step (docs/architecture.md, "Status rules"). The string values are a contract."""

    PENDING = "pending"
    RUNNING = "running"
    PASS = "pass"
    FAIL = "fail"
    UNKNOWN = "unknown"  # could not assess: unreachable, timeout, auth/host key refused, unreadable
    SKIPPED = "skipped"
    WAIVED = "waived"
    ROLLED_BACK = "rolled_back"
    INTERRUPTED = "interrupted"  # was running when the process died
    BLOCKED = "blocked"  # a prerequisite (`needs`) did not pass on this host
    # A step's status only, never a host's: the step targets no host (its hosts are a
    # group the inventory declares empty, e.g. no SM node when the SM runs on a switch).
    NOT_APPLICABLE = "not_applicable"

    def __str__(self) -> str:
        return self.value


@dataclass
class Host:
    """An inventory host: its name, merged vars and every group it is in."""

    name: str
    vars: dict[str, Any] = field(default_factory=dict)  # merged, Ansible precedence
    groups: list[str] = field(default_factory=list)  # every group it belongs to (ancestors included)

    @property
    def address(self) -> str:
        return str(self.vars.get("ansible_host", self.name))

    @property
    def port(self) -> int:
        return int(self.vars.get("ansible_port", 22))

    @property
    def user(self) -> str | None:
        u = self.vars.get("ansible_user")
        return str(u) if u is not None else None


@dataclass
class Group:
    """An inventory group: its direct hosts, child groups and vars."""

    name: str
    hosts: list[str] = field(default_factory=list)  # direct members
    children: list[str] = field(default_factory=list)
    vars: dict[str, Any] = field(default_factory=dict)


@dataclass
class Inventory:
    """The site: every host and group, and the files it was read from."""

    hosts: dict[str, Host]
    groups: dict[str, Group]
    sources: list[str] = field(default_factory=list)
    sha256: str = ""

    def group_members(self, group: str) -> list[str]:
        """Every host of the group and of its descendants, in inventory order."""
        seen: dict[str, None] = {}
        stack = [group]
        visited: set[str] = set()
        while stack:
            g = stack.pop(0)
            if g in visited or g not in self.groups:
                continue
            visited.add(g)
            for h in self.groups[g].hosts:
                seen.setdefault(h, None)
            stack.extend(self.groups[g].children)
        return list(seen)


@dataclass(frozen=True)
class Check:
    """One typed criterion (goss/NHC-shaped). `kind` is one of:
    exit | contains | not_contains | matches | not_matches | path | consistent | design.
    For `path`, `op` is one of eq ne lt le gt ge in matches semver count reference."""

    kind: str
    value: Any = None
    path: str | None = None
    op: str | None = None
    lower: float | None = None  # reference tolerance, relative (e.g. -0.10)
    upper: float | None = None
    line: int = 0
    raw: Any = None  # the YAML as written, for plan/report

    def describe(self) -> str:
        if self.kind == "path":
            if self.op == "reference":
                tol = []
                if self.lower is not None:
                    tol.append(
                        f"{self.lower:+.0%}" if isinstance(self.lower, (int, float)) else str(self.lower)
                    )
                if self.upper is not None:
                    tol.append(
                        f"{self.upper:+.0%}" if isinstance(self.upper, (int, float)) else str(self.upper)
                    )
                return f"{self.path} ≈ {self.value} ({' / '.join(tol) or 'exact'})"
            return f"{self.path} {self.op} {self.value!r}"
        if self.kind == "exit":
            return f"exit status == {self.value}"
        if self.kind == "consistent":
            return f"{self.path or 'value'} identical on every host"
        if self.kind == "design":
            return f"matches the design ({self.value})"
        return f"stdout {self.kind.replace('_', ' ')} {self.value!r}"


@dataclass(frozen=True)
class Action:
    """verify / apply / rollback of a step."""

    run: str  # command template
    parse: str | None = None
    expect: tuple[Check, ...] = ()
    timeout: float = 60.0
    then: str | None = None  # pending action after success, e.g. "reboot"
    line: int = 0
    detach: bool = (
        False  # long-running: started detached on the node, re-attached on resume (engine/detached.py)
    )
    # how long a detached command usually runs: seconds, a template giving seconds, or
    # {by: VAR, times: {VALUE: seconds}} (docs/long-running-steps.md); shown while it runs
    expected_time: Any = None


@dataclass(frozen=True)
class RunOnOne:
    """`run_on: one`: one host of `run_from` (default: the step's hosts) runs
    verify; the record's `items` (a path to a list) are judged one by one and
    each verdict goes to the hosts named by the item's `item_hosts` fields
    (docs/step-kinds.md). If that host cannot be reached, the next one takes over."""

    run_from: str = ""  # selector of the runner candidates ("" = the step's hosts)
    items: str = ""  # dotted path to the list of items in the record
    item_hosts: tuple[str, ...] = ()  # fields of an item that name hosts (its ends)
    item_name: str = ""  # fields naming the item in reasons (a link, a port), comma-separated
    # A host no item names: "unknown" (not seen), or "pass" when the record's
    # `covered` number (nodes the tool checked) is at least the hosts judged.
    unseen: str = "unknown"
    covered: str = ""


@dataclass(frozen=True)
class PairsSpec:
    """`pairs:`: verify.run is the client, `server` the server side."""

    plan: str  # rail | cross_rail | ring | list
    server: str  # command template of the server side
    ready: str  # regular expression on the server's output: it listens
    pairs: tuple[tuple[str, str], ...] = ()  # plan `list`: (client, server)
    concurrency: int = 8
    # at most this many tests at once go up from one leaf / come down into one
    # (engine/kinds/leaves.py); None: only `concurrency` bounds tests between leaves
    cross_leaf: int | None = None
    ready_timeout: float = 30.0
    # run on the server's host before its first test and after a test cut short:
    # stops a server a killed run left behind (by its port, `{{ port }}`)
    cleanup: str = ""


@dataclass(frozen=True)
class LaunchSpec:
    """`launch:`: one job from a launcher host over the step's hosts."""

    launcher: str  # selector of launcher candidates (first reachable runs the job)
    split: bool = True  # below threshold: split the hosts until the slow ones are named
    max_parallel: int = 8  # jobs at once while splitting


@dataclass(frozen=True)
class Step:
    """One step of the runbook as its file defines it (docs/steps.md)."""

    id: str
    title: str
    phase: str
    phase_title: str
    why: str
    hosts: str  # selector: group, NodeSet pattern or expression
    verify: Action | None
    apply: Action | None = None
    rollback: Action | None = None
    needs: tuple[str, ...] = ()
    hints: tuple[str, ...] = ()
    manual: bool = False
    checklist: tuple[str, ...] = ()  # for manual steps
    file: str = ""
    line: int = 0
    definition: dict = field(default_factory=dict, compare=False, hash=False)  # as written
    run_on: RunOnOne | None = None
    pairs: PairsSpec | None = None
    launch: LaunchSpec | None = None
    # `exclusive: true`: nothing else runs while this step does (docs/steps.md,
    # "Steps side by side"); part of the definition, so of sha256 too (the signed
    # log's step_definition_json hashes the definition as written)
    exclusive: bool = False
    # `exclusive: node` (exclusive is then True): nothing else runs on each host
    # while the step runs there; the other hosts go on (engine/scheduler.py)
    exclusive_scope: str = "fleet"

    @property
    def kind(self) -> str:
        """each (one command per host) | one | pairs | launch (docs/step-kinds.md)."""
        if self.run_on is not None:
            return "one"
        if self.pairs is not None:
            return "pairs"
        if self.launch is not None:
            return "launch"
        return "each"

    @functools.cached_property  # asked by the store, the session and the engine, per step
    def sha256(self) -> str:
        """Hash of the definition as written: a changed step makes old results stale.
        The definition is never changed once loaded (the loader builds a new Step)."""
        blob = json.dumps(self.definition, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(blob.encode()).hexdigest()


@dataclass(frozen=True)
class Phase:
    """A phase: one file of steps, run in order."""

    name: str
    title: str
    file: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Runbook:
    """Every phase in order, and the hash of the definitions."""

    phases: tuple[Phase, ...]
    sha256: str = ""

    @property
    def steps(self) -> list[Step]:
        return [s for p in self.phases for s in p.steps]

    def step(self, step_id: str) -> Step:
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)
