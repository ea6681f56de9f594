"""What the log's `summary` says: the rulebook's judgement (runbook.run.rules)
of the run state replayed from the journal inside the log.

The exporter writes this summary; verify-log derives it again from the
log's own journal and compares, so an edited verdict is named and a log can
never say other than `runbook status` and the TUI said; the report draws
from it. One function, three users.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ClusterShell.NodeSet import NodeSet, NodeSetException

from runbook.definition.model import Status
from runbook.inventory.hostsel import fold  # noqa: F401 - the one folding helper, used via this module
from runbook.run import rules
from runbook.run.events import EVENT_TYPES, event_from_dict
from runbook.run.state import RunState

CHANGE_ACTIONS = ("apply", "rollback")


def expand(hosts: Any) -> list[str]:
    """A NodeSet string, or a list of names/patterns, as a list of names."""
    if not hosts:
        return []
    if isinstance(hosts, str):
        hosts = [hosts]
    out: list[str] = []
    for pattern in hosts:
        try:
            out.extend(NodeSet(str(pattern)))
        except NodeSetException:
            out.append(str(pattern))
    return out


def reference_time(run: dict, results: list[dict], decisions: list[dict]) -> float:
    """The moment verdicts are judged at (waiver expiry): the run's end, else
    the last recorded time. Never the clock, so exports are reproducible."""
    if isinstance(run.get("ended"), (int, float)):
        return run["ended"]
    times = [_time(r) for r in results] + [_num(d.get("time")) for d in decisions]
    return max(times, default=0)


def _num(x: Any) -> float:
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) else 0


def _time(result: dict) -> float:
    return _num(result.get("ended")) or _num(result.get("started"))


def replay(entries: Iterable[Any], manual: frozenset[str] = frozenset()) -> RunState:
    """The run state the log's journal folds into, as the store would rebuild it
    with no process running it any more (a command left running is interrupted).
    ValueError when an entry is not a runbook event."""
    state = RunState(manual_steps=set(manual))
    for entry in entries:
        event = entry.get("event") if isinstance(entry, dict) else None
        if not isinstance(event, dict) or event.get("type") not in EVENT_TYPES:
            raise ValueError(
                f"journal entry {entry.get('seq') if isinstance(entry, dict) else '?'}: not a runbook event"
            )
        try:
            state.apply(event_from_dict(event))
        except (TypeError, ValueError, KeyError) as exc:
            raise ValueError(f"journal entry {entry.get('seq')}: {type(exc).__name__}: {exc}") from None
    state.mark_interrupted()
    return state


def final_verdicts(
    state: RunState, results: list[dict], at: float, targets: dict[str, list[str]] | None = None
) -> dict[str, dict]:
    """step_id -> host -> {status, reason, source}: rules.judge for every host the
    step targets or the run has a result or a decision for. `source` names what
    decided (`results[3]`, `decisions[0]`); a host nothing decided is left out."""
    result_index = {
        (str(r.get("step_id")), str(r.get("action")), str(r.get("host"))): i for i, r in enumerate(results)
    }
    decision_index = {id(d): j for j, d in enumerate(state.decisions)}
    pairs = dict.fromkeys((step, h) for step, hosts in (targets or {}).items() for h in hosts)
    pairs.update(dict.fromkeys(state.outcomes))
    for d in state.decisions:
        if d.hosts is not None:
            pairs.update(dict.fromkeys((d.step_id, h) for h in sorted(d.hosts)))
    verdicts: dict[str, dict] = {}
    for step, host in pairs:
        covering = state.decisions_for(step, host)
        j = state.judge(step, host, at)
        if j.decided_by == "none":
            continue
        if j.decided_by == "result":
            out = state.outcomes[(step, host)]
            source = f"results[{result_index.get((step, out.action, host), '?')}]"
        else:
            source = f"decisions[{decision_index[id(covering[j.decided_by])]}]"
        verdicts.setdefault(step, {})[host] = {"status": j.status.value, "reason": j.reason, "source": source}
    return verdicts


def step_statuses(
    step_ids: list[str],
    state: RunState,
    verdicts: dict[str, dict],
    at: float,
    targets: dict[str, list[str]] | None = None,
) -> dict[str, str]:
    """Each step's status from its hosts' verdicts (rules.step_status), a targeted
    host with none counting as pending; a step with no host known is judged by
    its whole-step decisions alone."""
    out: dict[str, str] = {}
    for sid in step_ids:
        hosts = {h: "pending" for h in (targets or {}).get(sid, [])}
        hosts.update({h: v["status"] for h, v in verdicts.get(sid, {}).items()})
        if hosts:
            out[sid] = rules.step_status(_status(v) for v in hosts.values()).value
            continue
        if targets is not None and targets.get(sid) == [] and sid not in state.manual_steps:
            out[sid] = Status.NOT_APPLICABLE.value  # targets no host: nothing to judge or decide
            continue
        whole = [d for d in state.decisions if d.step_id == sid and d.hosts is None]
        out[sid] = rules.judge(None, "", whole, manual=sid in state.manual_steps, at=at).status.value
    return out


def _status(value: str) -> Status:
    try:
        return Status(value)
    except ValueError:
        return Status.UNKNOWN  # a status this version does not know: never a pass


def changes(results: list[dict]) -> list[dict]:
    """Applied changes and rollbacks, with the `before` values kept for rollback."""
    return [
        {
            "result": i,
            "step_id": r.get("step_id"),
            "host": r.get("host"),
            "action": r.get("action"),
            "status": r.get("status"),
            "before": r.get("before"),
            "ended": r.get("ended"),
        }
        for i, r in enumerate(results)
        if r.get("action") in CHANGE_ACTIONS
    ]


def open_pending_actions(pending: list[dict]) -> list[dict]:
    """The latest state of each (step, host, action) that is still owed (rules.still_owed)."""
    latest: dict[tuple, tuple[float, int, dict]] = {}
    for i, p in enumerate(pending):
        key = (p.get("step_id"), p.get("host"), p.get("action"))
        cand = (_num(p.get("time")), i, p)
        if key not in latest or cand[:2] >= latest[key][:2]:
            latest[key] = cand
    owed = [v[2] for v in latest.values() if rules.still_owed(str(v[2].get("state")))]
    owed.sort(key=lambda p: (str(p.get("step_id")), str(p.get("action")), str(p.get("host"))))
    return [
        {
            "step_id": p.get("step_id"),
            "host": p.get("host"),
            "action": p.get("action"),
            "since": p.get("time"),
        }
        for p in owed
    ]


def summarize(doc: dict) -> dict:
    """The `summary` section of a log document, from its other sections."""
    results, decisions = doc.get("results", []), doc.get("decisions", [])
    at = reference_time(doc.get("run", {}), results, decisions)
    steps = doc.get("steps", [])
    manual = frozenset(str(s.get("id")) for s in steps if (s.get("definition") or {}).get("manual"))
    targets = {
        str(s.get("id")): [str(h) for h in s["targets"]] for s in steps if isinstance(s.get("targets"), list)
    }
    state = replay((doc.get("journal") or {}).get("entries") or [], manual)
    verdicts = final_verdicts(state, results, at, targets)
    step_ids = [s.get("id") for s in steps]
    return {
        "judged_at": at,
        "step_status": step_statuses(step_ids, state, verdicts, at, targets),
        "verdicts": verdicts,
        "changes": changes(results),
        "open_pending_actions": open_pending_actions(doc.get("pending_actions", [])),
    }
