"""What the log's `summary` says, derived from its results and decisions.

The exporter writes this summary; verify-log derives it again and compares, so
an edited verdict is named; the report draws from it. One function, three users.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ClusterShell.NodeSet import NodeSet, NodeSetException

from runbook.definition.model import Status, step_status

CHANGE_ACTIONS = ("apply", "rollback")
# An apply that succeeded proves nothing until verify runs again: only these judge a host.
VERDICT_ACTIONS = ("verify", "rollback")
# note (on a manual step) / confirm: a person checked a manual step
_DECIDING = ("skip", "waive", "note", "confirm")
_DECISION_STATUS = {"skip": "skipped", "waive": "waived", "note": "pass", "confirm": "pass"}
_WAIVABLE = ("fail", "unknown", "blocked", "interrupted")


def fold(hosts: Iterable[str]) -> str:
    """Hosts as one folded NodeSet string (`gpu[01-03,07]`)."""
    names = sorted(set(h for h in hosts if h))
    if not names:
        return ""
    try:
        return str(NodeSet.fromlist(names))
    except NodeSetException:  # a name NodeSet cannot hold: list it plainly
        return ",".join(names)


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


def _active(decision: dict, at: float) -> bool:
    expires = decision.get("expires")
    return decision.get("kind") in _DECIDING and not (
        isinstance(expires, (int, float)) and expires <= at)


def final_verdicts(results: list[dict], decisions: list[dict], at: float,
                   manual: frozenset[str] = frozenset()) -> dict[str, dict]:
    """step_id -> host -> {status, reason, source}, by the rules of
    runbook.run.state.RunState (the one place that decides a status): the latest
    verify/rollback result, then the active decisions on top of it: a skip makes
    the host skipped; a waiver turns fail/unknown/blocked/interrupted into waived
    (a pass stays a pass); a note on a manual step confirms it (pass). `source`
    names what decided (`results[3]`, `decisions[0]`). A host with only an apply
    result keeps no verdict until it is verified."""
    hosts_of_step: dict[str, set[str]] = {}
    latest: dict[tuple[str, str], tuple[float, int, dict]] = {}
    for i, r in enumerate(results):
        step, host = str(r.get("step_id", "")), str(r.get("host", ""))
        hosts_of_step.setdefault(step, set()).add(host)
        if r.get("action", "verify") not in VERDICT_ACTIONS:
            continue
        cand = (_time(r), i, {"status": str(r.get("status", "")), "reason": r.get("reason") or "",
                              "source": f"results[{i}]"})
        if (step, host) not in latest or cand[:2] >= latest[(step, host)][:2]:
            latest[(step, host)] = cand
    verdicts: dict[str, dict] = {}
    for (step, host), (_, _, entry) in latest.items():
        verdicts.setdefault(step, {})[host] = dict(entry)
    # Decisions in the order they were taken: the latest active one of a kind wins.
    for j, d in sorted(enumerate(decisions), key=lambda jd: (_num(jd[1].get("time")), jd[0])):
        kind = d.get("kind")
        if not _active(d, at) or (kind == "note" and str(d.get("step_id", "")) not in manual):
            continue
        step = str(d.get("step_id", ""))
        hosts = expand(d.get("hosts")) or sorted(hosts_of_step.get(step, ()))
        entry = {"status": _DECISION_STATUS[kind], "reason": d.get("reason") or "", "source": f"decisions[{j}]"}
        for host in hosts:
            now = verdicts.get(step, {}).get(host)
            if kind == "waive" and (now is None or now["status"] not in _WAIVABLE):
                continue
            if kind in ("note", "confirm") and now is not None and now["source"].startswith("results"):
                continue  # a confirmation stands for a manual step that has no result
            verdicts.setdefault(step, {})[host] = dict(entry)
    return verdicts


def step_statuses(step_ids: list[str], verdicts: dict[str, dict], decisions: list[dict],
                  at: float, manual: frozenset[str] = frozenset()) -> dict[str, str]:
    """Each step's status from its hosts' verdicts (model.step_status: worst wins)."""
    out: dict[str, str] = {}
    for sid in step_ids:
        hosts = verdicts.get(sid, {})
        if hosts:
            out[sid] = str(step_status([_status(v["status"]) for v in hosts.values()]))
            continue
        whole = [d for d in decisions if d.get("step_id") == sid and _active(d, at)
                 and not expand(d.get("hosts")) and (d.get("kind") != "note" or sid in manual)]
        out[sid] = _DECISION_STATUS[whole[-1]["kind"]] if whole else "pending"
    return out


def _status(value: str) -> Status:
    try:
        return Status(value)
    except ValueError:
        return Status.UNKNOWN  # a status this version does not know: never a pass


def changes(results: list[dict]) -> list[dict]:
    """Applied changes and rollbacks, with the `before` values kept for rollback."""
    return [{"result": i, "step_id": r.get("step_id"), "host": r.get("host"),
             "action": r.get("action"), "status": r.get("status"), "before": r.get("before"),
             "ended": r.get("ended")}
            for i, r in enumerate(results) if r.get("action") in CHANGE_ACTIONS]


def open_pending_actions(pending: list[dict]) -> list[dict]:
    """The latest state of each (step, host, action) that is still `owed`."""
    latest: dict[tuple, tuple[float, int, dict]] = {}
    for i, p in enumerate(pending):
        key = (p.get("step_id"), p.get("host"), p.get("action"))
        cand = (_num(p.get("time")), i, p)
        if key not in latest or cand[:2] >= latest[key][:2]:
            latest[key] = cand
    owed = [v[2] for v in latest.values() if v[2].get("state") == "owed"]
    owed.sort(key=lambda p: (str(p.get("step_id")), str(p.get("action")), str(p.get("host"))))
    return [{"step_id": p.get("step_id"), "host": p.get("host"), "action": p.get("action"),
             "since": p.get("time")} for p in owed]


def summarize(doc: dict) -> dict:
    """The `summary` section of a log document, from its other sections."""
    results, decisions = doc.get("results", []), doc.get("decisions", [])
    at = reference_time(doc.get("run", {}), results, decisions)
    steps = doc.get("steps", [])
    manual = frozenset(str(s.get("id")) for s in steps if (s.get("definition") or {}).get("manual"))
    verdicts = final_verdicts(results, decisions, at, manual)
    step_ids = [s.get("id") for s in steps]
    return {
        "judged_at": at,
        "step_status": step_statuses(step_ids, verdicts, decisions, at, manual),
        "verdicts": verdicts,
        "changes": changes(results),
        "open_pending_actions": open_pending_actions(doc.get("pending_actions", [])),
    }
