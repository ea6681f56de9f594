"""What the screen shows, computed from the run state: per-step counts and
status, the header facts, the resume notes, the step pane's text.

Plain Python (no textual): the widgets only draw what this hands them, and
the tests can check the numbers without a terminal. Targets are computed once
per step, because the inventory does not change while the app is open.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..criteria.describe import describe
from ..definition.kinds import launch_variables
from ..definition.model import Action, Inventory, Runbook, Status, Step
from ..definition.plan import BEFORE_PLACEHOLDER
from ..definition.targets import targets
from ..definition.template import lookup, placeholders
from ..engine.hostrun import command_for
from ..glyphs import COUNT_ORDER
from ..inventory.load import fold, host_vars
from ..run import rules
from ..run.state import RunState


@lru_cache(maxsize=256)
def _fold(hosts: tuple[str, ...]) -> str:
    return fold(list(hosts))


def folded(hosts) -> str:
    """NodeSet folding is slow for 1,000 names (ClusterShell parses each one):
    the same lists come back on every repaint, so remember them."""
    return _fold(tuple(hosts))


def _before_stub(action: Action) -> dict:
    """`before` values not recorded yet (no apply so far): a placeholder at
    every `before.*` path the command uses."""
    stub: dict = {}
    for path in placeholders(action.run):
        parts = path.split(".")
        if parts[0] != "before" or len(parts) < 2:
            continue
        node = stub
        for part in parts[1:-1]:
            node = node.setdefault(part, {}) if isinstance(node.get(part, {}), dict) else {}
        node[parts[-1]] = BEFORE_PLACEHOLDER
    return stub


def _command(action: Action, variables: dict, before: Any) -> str:
    try:
        return command_for(action, variables, before if before is not None else _before_stub(action))
    except Exception as exc:
        return f"<cannot build the command: {exc}>"


@dataclass(frozen=True)
class StepRow:
    """One line of the step list."""

    step_id: str
    phase: str
    phase_title: str
    title: str
    status: str
    counts: tuple[tuple[str, int], ...]  # (status, n) in COUNT_ORDER, zeros left out
    manual: bool = False
    fixable: bool = False  # the step has an apply: `a` can fix what fails


@dataclass(frozen=True)
class HeaderFacts:
    site: str
    run: str
    operator: str
    steps_passed: int
    steps_total: int
    hosts: int
    pending: tuple[str, ...] = ()  # "reboot owed: gpu[07,31]"
    activity: str = ""  # "verify link-type-ib 312/1000", while a run is going
    steps_skipped: int = 0  # shown beside the passes, never counted in them
    steps_waived: int = 0


@dataclass(frozen=True)
class HostFacts:
    """The selected host of the selected step: status, reason, command as run."""

    host: str
    status: str
    reason: str = ""
    action: str = ""
    command: str = ""
    exit_status: int | None = None
    before: dict[str, Any] | None = None
    pending: tuple[str, ...] = ()


@dataclass
class StepText:
    """The step pane: what it checks and why, the commands for one host."""

    step_id: str
    title: str
    why: str
    host: str | None
    hosts: str
    host_count: int
    commands: list[tuple[str, str]] = field(default_factory=list)  # (label, command as it will run)
    criteria: list[str] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)
    checklist: list[str] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)
    before: dict[str, Any] | None = None
    stale: bool = False
    then: str | None = None
    decisions: list[str] = field(default_factory=list)  # notes, waivers, skips on this step, oldest first


def restored_values(step: Step, before: Any) -> dict[str, Any] | None:
    """The recorded values a rollback puts back: only the `before.*` paths its
    command uses (the whole verify record is far too much to read)."""
    if before is None:
        return None
    paths = [
        p[len("before.") :]
        for p in placeholders(step.rollback.run if step.rollback else "")
        if p.startswith("before.")
    ]
    if not paths or not isinstance(before, dict):
        return {"before": before} if not isinstance(before, dict) else dict(before)
    return {p: lookup(before, p) for p in dict.fromkeys(paths)}


def ordered_counts(counts: dict[str, int]) -> tuple[tuple[str, int], ...]:
    known = [(k, counts[k]) for k in COUNT_ORDER if counts.get(k)]
    extra = [(k, v) for k, v in sorted(counts.items()) if v and k not in COUNT_ORDER]
    return tuple(known + extra)


class RunView:
    def __init__(self, runbook: Runbook, inventory: Inventory, state: RunState):
        self.runbook = runbook
        self.inventory = inventory
        self.state = state
        self.steps: dict[str, Step] = {s.id: s for s in runbook.steps}
        self.problems: list[str] = []  # steps whose hosts cannot be resolved (lint says so too)
        self._targets: dict[str, list[str]] = {}
        for s in runbook.steps:
            try:
                self._targets[s.id] = targets(s, inventory)
            except (KeyError, ValueError) as exc:
                self._targets[s.id] = []
                self.problems.append(f"{s.id}: {exc.args[0] if exc.args else exc}")

    # --- per step -------------------------------------------------------
    def hosts_of(self, step_id: str) -> list[str]:
        return self._targets[step_id]

    def statuses(self, step_id: str, at: float | None = None) -> dict[str, str]:
        at = time.time() if at is None else at
        status = self.state.status
        return {h: status(step_id, h, at).value for h in self._targets[step_id]}

    def row(self, step_id: str, at: float | None = None) -> StepRow:
        step = self.steps[step_id]
        at = time.time() if at is None else at
        status = self.state.status  # (statuses() without the round trip through their text)
        values = [status(step_id, h, at) for h in self._targets[step_id]]
        status = rules.step_status(values).value
        return StepRow(
            step.id,
            step.phase,
            step.phase_title,
            step.title,
            status,
            ordered_counts(rules.counts(values)),
            step.manual,
            step.apply is not None,
        )

    def rows(self, at: float | None = None) -> list[StepRow]:
        at = time.time() if at is None else at
        return [self.row(s.id, at) for s in self.runbook.steps]

    def is_stale(self, step_id: str) -> bool:
        sha = self.steps[step_id].sha256
        outcome = self.state.outcome
        for h in self._targets[step_id]:
            o = outcome(step_id, h)
            if o is not None and rules.stale_reason(
                o.status, o.step_sha256, o.inventory_sha256, sha, self.inventory.sha256
            ):
                return True
        return False

    # --- the run as a whole --------------------------------------------
    def pending_lines(self) -> tuple[str, ...]:
        owed: dict[str, list[str]] = {}
        # Copies of the state's dicts before walking them, here and below: the engine's
        # thread folds events into them meanwhile (workspace/engine_thread.py).
        for p in list(self.state.pending.values()):
            owed.setdefault(p["action"], []).append(p["host"])
        return tuple(f"{action} owed: {folded(hosts)}" for action, hosts in sorted(owed.items()))

    def header(self, rows: list[StepRow] | None = None, activity: str = "") -> HeaderFacts:
        rows = self.rows() if rows is None else rows
        # Passed means passed: a skipped or waived step is counted as such, not as a pass.
        passed = sum(1 for r in rows if r.status == Status.PASS.value)
        skipped = sum(1 for r in rows if r.status == Status.SKIPPED.value)
        waived = sum(1 for r in rows if r.status == Status.WAIVED.value)
        run = self.state.run
        site = str(run.get("site", "")) or _site(self.inventory)
        return HeaderFacts(
            site,
            str(run.get("run_id", "")),
            str(run.get("operator", "")),
            passed,
            len(rows),
            len(self.inventory.hosts),
            self.pending_lines(),
            activity,
            skipped,
            waived,
        )

    def first_open_step(self) -> str | None:
        """Where to put the cursor on opening: the first step not yet passed."""
        for s in self.runbook.steps:
            if Status(self.row(s.id).status) not in rules.SATISFIED:
                return s.id
        return self.runbook.steps[0].id if self.runbook.steps else None

    def interrupted(self) -> dict[str, list[str]]:
        """step -> hosts whose command was in flight when the run stopped."""
        found: dict[str, list[str]] = {}
        for (step_id, host), out in list(self.state.outcomes.items()):
            if out.status == Status.INTERRUPTED and step_id in self.steps:
                found.setdefault(step_id, []).append(host)
        return {s.id: found[s.id] for s in self.runbook.steps if s.id in found}

    def stale_steps(self) -> list[str]:
        return [s.id for s in self.runbook.steps if self.is_stale(s.id)]

    def is_new(self) -> bool:
        """Nothing verified, applied or decided yet: the run's first start."""
        return not self.state.outcomes and not self.state.decisions

    def resume_notes(self) -> list[str]:
        """What happened since last time: commands interrupted, definitions changed."""
        notes = []
        for step_id, hosts in self.interrupted().items():
            n = len(hosts)
            notes.append(
                f"{n} host{'s were' if n != 1 else ' was'} interrupted in {step_id} "
                f"({fold(hosts)}); re-verify? (i)"
            )
        notes += [f"no hosts for {p}" for p in self.problems]
        stale = self.stale_steps()
        if stale:
            notes.append(
                f"changed since their results were recorded: {', '.join(stale)}; "
                "re-verify them with v on each step"
            )
        return notes

    def decision_lines(self, step_id: str, at: float | None = None) -> list[str]:
        """The notes, waivers and skips recorded on a step, as the step pane shows them:
        "note by alice on gpu[01-04]: walked rack 1", a waiver with its expiry."""
        at = time.time() if at is None else at
        lines = []
        for d in self.state.decisions:
            if d.step_id != step_id or d.kind not in rules.DECIDING:
                continue
            where = f" on {d.hosts_text}" if d.hosts_text else ""
            until = ""
            if d.expires is not None:
                day = time.strftime("%Y-%m-%d %H:%M", time.localtime(d.expires))
                until = f" (expired {day})" if at >= d.expires else f" (until {day})"
            lines.append(f"{d.kind} by {d.operator}{where}{until}: {d.reason}")
        return lines

    # --- the selected host ---------------------------------------------
    def host_facts(self, step_id: str, host: str) -> HostFacts:
        out = self.state.outcome(step_id, host)
        pending = tuple(f"{p['action']} owed" for p in self.state.pending_for(host))
        before = restored_values(self.steps[step_id], self.state.before(step_id, host))
        return HostFacts(
            host,
            self.state.status(step_id, host).value,
            self.state.reason(step_id, host),
            out.action if out else "",
            out.command if out else "",
            out.exit_status if out else None,
            before,
            pending,
        )

    def step_text(self, step_id: str, host: str | None) -> StepText:
        step = self.steps[step_id]
        everyone = self._targets[step_id]
        before = self.state.before(step_id, host) if host else None
        text = StepText(
            step.id,
            step.title,
            step.why.strip(),
            host,
            folded(everyone),
            len(everyone),
            hints=list(step.hints),
            checklist=list(step.checklist),
            needs=list(step.needs),
            before=restored_values(step, before),
            stale=self.is_stale(step_id),
        )
        text.decisions = self.decision_lines(step_id)
        variables = host_vars(self.inventory, host) if host else {}
        if host and step.launch is not None:  # the job over every target, as the plan shows it
            variables = {**variables, **launch_variables(everyone, lambda h: host_vars(self.inventory, h))}
        for label in ("verify", "apply", "rollback"):
            action: Action | None = getattr(step, label)
            if action is None:
                continue
            command = _command(action, variables, before) if host else action.run
            text.commands.append((label, command))
            if label == "verify":
                # with the selected host's values, as the plan shows them ("version eq 23.10-...")
                text.criteria = [describe(c, dict(variables) if host else None) for c in action.expect] or [
                    "exit status == 0"
                ]
            if label == "apply":
                text.then = action.then
        return text


def _site(inventory: Inventory) -> str:
    for h in inventory.hosts:
        return str(host_vars(inventory, h).get("site", ""))
    return ""
