"""Reopening a run: what was cut short, and which results no longer apply.

- Interrupted: a host whose latest record for a step is a HostStarted with no
  HostFinished was running when its process died. Opening the run for writing
  appends one RunInterrupted event saying which (and any incomplete last write
  that was dropped); replaying that event turns them `interrupted`, for good.
- Stale: a result was made with the step definition and the inventory of its
  time (StepStarted.step_sha256 / inventory_sha256). When either differs from
  what is loaded now (run.rules.stale_reason decides), the result is stale:
  still shown, never trusted as current (the engine re-verifies stale hosts).
"""

from __future__ import annotations

from typing import Any

from ..inventory.hostsel import fold
from ..run import rules
from ..run.state import RunState


def interruption_reason(
    running: dict[str, list[str]], dropped: str | None, taken_over: dict[str, Any] | None
) -> str:
    """One line for the RunInterrupted event appended on reopening."""
    parts = []
    if running:
        n = sum(len(h) for h in running.values())
        where = "; ".join(f"{step} on {fold(hosts)}" for step, hosts in running.items())
        parts.append(
            f"the previous process ended while {n} command(s) were in flight ({where}); "
            "they are now interrupted"
        )
    if dropped:
        parts.append(dropped)
    if taken_over:
        parts.append(
            f"its lock was taken over from pid {taken_over.get('pid', '?')} on host "
            f"{taken_over.get('host', '?')}, which no longer held it"
        )
    return "; ".join(parts)


def _short(sha: str) -> str:
    return sha[:12] if sha else "none"


def stale_hosts(
    state: RunState, current_step_hashes: dict[str, str], inventory_sha256: str | None
) -> set[tuple[str, str]]:
    """(step, host) whose latest result is stale (rules.stale_reason)."""
    return {
        key
        for key, o in state.outcomes.items()
        if rules.stale_reason(
            o.status, o.step_sha256, o.inventory_sha256, current_step_hashes.get(key[0]), inventory_sha256
        )
    }


def stale_steps(
    state: RunState, current_step_hashes: dict[str, str], inventory_sha256: str | None
) -> dict[str, str]:
    """step_id -> why its recorded results are stale (steps with no stale result are
    absent): the rulebook decides each (step, host); this only words it per step."""
    gone: dict[str, list[str]] = {}
    changed: dict[str, dict[str, str]] = {}
    moved: dict[str, dict[str, str]] = {}
    for step, host in sorted(stale_hosts(state, current_step_hashes, inventory_sha256)):
        o = state.outcomes[(step, host)]
        now = current_step_hashes.get(step)
        if now is None:
            gone.setdefault(step, []).append(host)
            continue
        if rules.stale_reason(o.status, o.step_sha256, "", now, None):
            changed.setdefault(step, {})[host] = o.step_sha256
        if rules.stale_reason(o.status, "", o.inventory_sha256, now, inventory_sha256):
            moved.setdefault(step, {})[host] = o.inventory_sha256
    out: dict[str, list[str]] = {}
    for step, hosts in gone.items():
        out.setdefault(step, []).append(
            f"step {step} is no longer in the runbook; its results for {fold(hosts)} were "
            "recorded for a definition that is gone"
        )
    for step, was in changed.items():
        out.setdefault(step, []).append(
            f"the definition of step {step} changed since the results for {fold(was)} were "
            f"recorded (recorded {', '.join(sorted({_short(v) for v in was.values()}))}, "
            f"now {_short(current_step_hashes[step])})"
        )
    for step, was in moved.items():
        out.setdefault(step, []).append(
            f"the inventory changed since the results for {fold(was)} were recorded (recorded "
            f"{', '.join(sorted({_short(v) for v in was.values()}))}, now {_short(inventory_sha256 or '')})"
        )
    return {step: "; ".join(why) for step, why in out.items()}
