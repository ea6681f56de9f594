"""The run as data: what `runbook run --json` and `runbook status --json` print
(a contract: docs/architecture.md, "Command line"), and the summary table.
Every status in it is the rulebook's (rules.py), judged at `at`."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from ..definition.model import Inventory, Status, Step
from ..definition.targets import targets
from ..inventory.load import fold
from . import rules
from .state import RunState


def step_summary(
    state: RunState, step: Step, inventory: Inventory, hosts: list[str] | None = None, at: float | None = None
) -> dict[str, Any]:
    at = time.time() if at is None else at
    per_host: dict[str, Any] = {}
    groups: dict[str, list[str]] = {}
    for h in targets(step, inventory, hosts):
        j = state.judge(step.id, h, at)
        st = j.status
        out = state.outcome(step.id, h)
        per_host[h] = {
            "status": st.value,
            "exit_status": out.exit_status if out else None,
            "reason": j.reason,
            "action": out.action if out else None,
        }
        groups.setdefault(st.value, []).append(h)
    statuses = [Status(v["status"]) for v in per_host.values()]
    return {
        "id": step.id,
        "phase": step.phase,
        "title": step.title,
        "manual": step.manual,
        "status": rules.step_status(statuses).value,
        "counts": rules.counts(statuses),
        "failing": fold(groups.get("fail", [])),
        "unknown": fold(groups.get("unknown", []) + groups.get("interrupted", [])),
        "blocked": fold(groups.get("blocked", [])),
        "waived": fold(groups.get("waived", [])),
        "hosts": per_host,
    }


def run_summary(
    state: RunState,
    steps: Iterable[Step],
    inventory: Inventory,
    hosts: list[str] | None = None,
    *,
    with_exit_code: bool = False,
    at: float | None = None,
) -> dict[str, Any]:
    at = time.time() if at is None else at
    steps_out = [step_summary(state, s, inventory, hosts, at) for s in steps]
    automated = [s for s in steps_out if not s["manual"]]
    pending = sorted(state.pending.values(), key=lambda p: (p["action"], p["host"]))
    owed: dict[str, list[str]] = {}
    for p in pending:
        owed.setdefault(p["action"], []).append(p["host"])
    doc = {
        "run": state.run.get("run_id", ""),
        "site": state.run.get("site", ""),
        "operator": state.run.get("operator", ""),
        "status": rules.run_status(Status(s["status"]) for s in automated).value,
        "steps": steps_out,
        "pending_actions": {a: fold(hs) for a, hs in owed.items()},
    }
    if with_exit_code:
        doc["exit_code"] = rules.exit_code(
            Status(h["status"]) for s in automated for h in s["hosts"].values()
        )
    return doc


def exit_code(
    state: RunState,
    steps: Iterable[Step],
    inventory: Inventory,
    hosts: list[str] | None = None,
    at: float | None = None,
) -> int:
    """The exit code of `run` and `status` (rules.exit_code over the automated steps' hosts)."""
    return run_summary(state, steps, inventory, hosts, with_exit_code=True, at=at)["exit_code"]
