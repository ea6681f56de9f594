"""Reopening a run: what was cut short, and which results no longer apply.

- Interrupted: a host whose latest record for a step is a HostStarted with no
  HostFinished was running when its process died. Opening the run for writing
  appends one RunInterrupted event saying which (and any incomplete last write
  that was dropped); replaying that event turns them `interrupted`, for good.
- Stale: a result was made with the step definition (StepStarted.step_sha256)
  and the inventory (RunStarted.inventory_sha256) of its time. When either
  differs from what is loaded now, the step's results are stale: still shown,
  never trusted as current (the engine re-verifies stale hosts).
"""
from __future__ import annotations

from typing import Any

from ClusterShell.NodeSet import NodeSet

from .index import RunIndex


def fold(hosts) -> str:
    return str(NodeSet.fromlist(list(hosts))) if hosts else ""


def interruption_reason(running: dict[str, list[str]], dropped: str | None,
                        taken_over: dict[str, Any] | None) -> str:
    """One line for the RunInterrupted event appended on reopening."""
    parts = []
    if running:
        n = sum(len(h) for h in running.values())
        where = "; ".join(f"{step} on {fold(hosts)}" for step, hosts in running.items())
        parts.append(f"the previous process ended while {n} command(s) were in flight ({where}); "
                     "they are now interrupted")
    if dropped:
        parts.append(dropped)
    if taken_over:
        parts.append(f"its lock was taken over from pid {taken_over.get('pid', '?')} on host "
                     f"{taken_over.get('host', '?')}, which no longer held it")
    return "; ".join(parts)


def _short(sha: str) -> str:
    return sha[:12] if sha else "none"


def stale_steps(index: RunIndex, current_step_hashes: dict[str, str],
                inventory_sha256: str | None) -> dict[str, str]:
    """step_id -> why its recorded results are stale (steps with no stale result are absent)."""
    by_step: dict[str, list[dict[str, Any]]] = {}
    for (step, _host), r in index.latest.items():
        if r["status"] not in ("running", "pending"):
            by_step.setdefault(step, []).append(r)
    out: dict[str, str] = {}
    for step, rows in by_step.items():
        reasons = []
        if step not in current_step_hashes:
            reasons.append(f"step {step} is no longer in the runbook; its results for "
                           f"{fold(r['host'] for r in rows)} were recorded for a definition that is gone")
        else:
            now = current_step_hashes[step]
            changed = [r for r in rows if r["step_sha256"] and r["step_sha256"] != now]
            if changed:
                was = sorted({_short(r["step_sha256"]) for r in changed})
                reasons.append(f"the definition of step {step} changed since the results for "
                               f"{fold(r['host'] for r in changed)} were recorded (recorded "
                               f"{', '.join(was)}, now {_short(now)})")
        if inventory_sha256:
            moved = [r for r in rows if r["inventory_sha256"] and r["inventory_sha256"] != inventory_sha256]
            if moved:
                was = sorted({_short(r["inventory_sha256"]) for r in moved})
                reasons.append(f"the inventory changed since the results for "
                               f"{fold(r['host'] for r in moved)} were recorded (recorded "
                               f"{', '.join(was)}, now {_short(inventory_sha256)})")
        if reasons:
            out[step] = "; ".join(reasons)
    return out


def stale_hosts(index: RunIndex, current_step_hashes: dict[str, str],
                inventory_sha256: str | None) -> set[tuple[str, str]]:
    """(step, host) pairs whose latest result is stale, by the same rules."""
    out = set()
    for (step, host), r in index.latest.items():
        if r["status"] in ("running", "pending"):
            continue
        now = current_step_hashes.get(step)
        if now is None or (r["step_sha256"] and r["step_sha256"] != now) or \
                (inventory_sha256 and r["inventory_sha256"] and r["inventory_sha256"] != inventory_sha256):
            out.add((step, host))
    return out
