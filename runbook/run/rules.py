"""The rulebook: every rule that turns a run's events into what a person sees.

Nothing else in runbook derives a status. The engine, the store, `status`,
the exit code, the TUI's view model and the signed log all ask these
functions (docs/architecture.md, "Status rules", is the same table in prose).
Every rule takes the judgement time `at` as an argument: the clock for a
live view, the run's end for the signed log, so an export is reproducible.

Per step x host, from the latest result of any action (journal order):

    no result                          pending
    HostStarted without HostFinished   running (interrupted once its process is gone)
    verify                             its verdict: pass | fail | unknown | blocked
    apply succeeded                    pending ("applied; re-verify pending", reboot owed or not):
                                       an apply proves nothing until verify runs again
    apply failed / could not assess    fail / unknown
    re-verify after an apply           its verdict (the apply is kept as history)
    rollback succeeded / failed        rolled_back / fail (unknown if it could not assess)

Then the operator's decisions still active at `at` (a decision with an
expiry is active while at < expires):

    skip                      -> skipped, whatever the result (not while running)
    waive on fail, unknown, blocked or interrupted -> waived (a pass needs no waiver)
    note on a manual step with no result -> pass (the note is its confirmation)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..definition.model import Inventory, Runbook, Status, Step
from ..errors import EXIT_FAIL, EXIT_OK, EXIT_UNKNOWN
from ..inventory.hostsel import fold, select_hosts

# "Done, nothing more to do": gating (`needs`), resume selection, the exit code.
SATISFIED = frozenset({Status.PASS, Status.SKIPPED, Status.WAIVED})
# What a waiver can cover.
WAIVABLE = frozenset({Status.FAIL, Status.UNKNOWN, Status.BLOCKED, Status.INTERRUPTED})
# What `--rerun-failed` runs again.
RERUN = frozenset({Status.FAIL, Status.UNKNOWN, Status.INTERRUPTED, Status.BLOCKED})
# A step's status is its worst host's, in this order.
_WORST_FIRST = (
    Status.RUNNING,
    Status.FAIL,
    Status.UNKNOWN,
    Status.INTERRUPTED,
    Status.BLOCKED,
    Status.ROLLED_BACK,
    Status.PENDING,
)
# Decision kinds that change a status; approve/decline only record a confirmation.
DECIDING = ("skip", "waive", "note")
INTERRUPTED_REASON = "interrupted: the run stopped while this command was in flight"


class DecisionLike(Protocol):
    kind: str
    operator: str
    reason: str
    expires: float | None


@dataclass(frozen=True)
class Judgement:
    """A host's status for a step, why, and what decided it: "result",
    "none" (nothing recorded) or the index of the deciding decision in the
    list it was given."""

    status: Status
    reason: str
    decided_by: str | int = "result"


def still_owed(pending_state: str) -> bool:
    """A pending action (reboot) stays owed until it is done: `failed` is still owed."""
    return pending_state != "done"


def active(decision: DecisionLike, at: float) -> bool:
    return decision.expires is None or at < decision.expires


def apply_outcome(
    action: str, succeeded: bool, assessed: bool, then: str | None, why: str
) -> tuple[Status, str]:
    """The status an apply or rollback result is recorded with."""
    if succeeded:
        if action == "apply":
            owed = f"; {then} owed" if then else ""
            return Status.PENDING, f"applied{owed}; re-verify pending"
        return Status.ROLLED_BACK, "rolled back to the recorded values"
    return (Status.FAIL if assessed else Status.UNKNOWN), f"{action} failed: {why}"


def judge(
    raw: Status | None, raw_reason: str, decisions: Sequence[DecisionLike], *, manual: bool, at: float
) -> Judgement:
    """One host of one step. `raw` is the status of its latest result (None:
    none); `decisions` are the ones covering this host, in the order taken."""
    if raw == Status.RUNNING:
        return Judgement(raw, raw_reason)
    latest: dict[str, tuple[int, DecisionLike]] = {}
    for i, d in enumerate(decisions):
        if d.kind in DECIDING and active(d, at):
            latest[d.kind] = (i, d)
    was = f" (was {raw.value}: {raw_reason})" if raw is not None and raw_reason else ""
    if "skip" in latest:
        i, d = latest["skip"]
        return Judgement(Status.SKIPPED, f"skip by {d.operator}: {d.reason}{was}", i)
    if raw in WAIVABLE and "waive" in latest:
        i, d = latest["waive"]
        return Judgement(Status.WAIVED, f"waive by {d.operator}: {d.reason}{was}", i)
    if manual and raw is None and "note" in latest:
        i, d = latest["note"]
        return Judgement(Status.PASS, f"confirmed by {d.operator}: {d.reason}", i)
    if raw is None:
        return Judgement(Status.PENDING, "", "none")
    return Judgement(raw, raw_reason)


def step_status(host_statuses: Iterable[Status]) -> Status:
    """A step's status from its hosts' (worst wins). No host: not_applicable (the
    step targets nothing here); as a run's status from its steps', a step that
    is not applicable counts for nothing."""
    s = set(host_statuses) - {Status.NOT_APPLICABLE}
    if not s:
        return Status.NOT_APPLICABLE
    for worst in _WORST_FIRST:
        if worst in s:
            return worst
    if s <= {Status.SKIPPED}:
        return Status.SKIPPED
    if Status.WAIVED in s:
        return Status.WAIVED
    return Status.PASS


def counts(host_statuses: Iterable[Status]) -> dict[str, int]:
    """status value -> how many hosts have it (sorted by name)."""
    out: dict[str, int] = {}
    for st in host_statuses:
        out[st.value] = out.get(st.value, 0) + 1
    return dict(sorted(out.items()))


def run_status(step_statuses: Iterable[Status]) -> Status:
    """The run's overall verdict from its automated steps' statuses."""
    return step_status(step_statuses)


def exit_code(host_statuses: Iterable[Status]) -> int:
    """0 every targeted host of the automated steps is pass/skipped/waived;
    1 some fail; 3 anything else (unknown, pending, blocked, ...) and none fail."""
    seen = set(host_statuses)
    if Status.FAIL in seen:
        return EXIT_FAIL
    if seen - SATISFIED:
        return EXIT_UNKNOWN
    return EXIT_OK


def stale_reason(
    status: Status,
    judged_step_sha: str,
    judged_inventory_sha: str,
    current_step_sha: str | None,
    current_inventory_sha: str | None,
) -> str | None:
    """Why a result made with (judged_step_sha, judged_inventory_sha) no longer
    stands for today's definition and inventory; None when it does. A command
    in flight or an apply awaiting its re-verify is not a judgement, so never
    stale; an empty recorded hash (older journals) is not evidence of change.
    current_step_sha None: the step is gone from the runbook."""
    if status in (Status.RUNNING, Status.PENDING):
        return None
    if current_step_sha is None:
        return "the step is no longer in the runbook"
    why = []
    if judged_step_sha and judged_step_sha != current_step_sha:
        why.append(
            f"the step's definition changed (recorded {judged_step_sha[:12]}, now {current_step_sha[:12]})"
        )
    if current_inventory_sha and judged_inventory_sha and judged_inventory_sha != current_inventory_sha:
        why.append(
            f"the inventory changed (recorded {judged_inventory_sha[:12]}, now {current_inventory_sha[:12]})"
        )
    return "; ".join(why) or None


def blocked_reason(
    step: Step,
    host: str,
    runbook: Runbook,
    inventory: Inventory,
    status_of: Callable[[str, str], Status],
    memo: dict | None = None,
) -> str | None:
    """Why `host` may not run `step` yet, or None. A prerequisite that targets
    the host is judged on that host; one that does not (say, an SM-node step
    needed by a compute step) must be satisfied on all of its own hosts.

    `memo`: one dict shared by the calls for the hosts of one step while the
    state does not change (a gating pass): each prerequisite's hosts are then
    selected, and judged on all of its own hosts, once per pass rather than
    once per host (quadratic on a large fleet)."""
    memo = {} if memo is None else memo
    for need in step.needs:
        pre = memo.get(("step", need), False)  # Runbook.step walks every step: once per pass
        if pre is False:
            try:
                pre = memo[("step", need)] = runbook.step(need)
            except KeyError:
                pre = memo[("step", need)] = None
        if pre is None:
            continue
        selected = memo.get(("hosts", need))
        if selected is None:
            pre_hosts = select_hosts(inventory, pre.hosts)
            selected = memo[("hosts", need)] = (pre_hosts, set(pre_hosts))
        pre_hosts, pre_set = selected
        if host in pre_set:
            st = status_of(need, host)
            if st not in SATISFIED:
                return f"needs {need}, which is {st.value} on this host"
        else:
            bad = memo.get(("bad", need))
            if bad is None:
                bad = memo[("bad", need)] = [h for h in pre_hosts if status_of(need, h) not in SATISFIED]
            if bad:
                return f"needs {need}, not yet passed on {fold(bad)}"
    return None
