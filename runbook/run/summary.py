"""The run as data: what `runbook run --json` and `runbook status --json` print
(a contract, DESIGN.md §5), and what the TUI header and the summary table show."""
from __future__ import annotations

from typing import Any, Iterable

from ..engine.targets import targets
from ..inventory.load import fold
from ..definition.model import Inventory, Status, Step, step_status
from .state import RunState


def step_summary(state: RunState, step: Step, inventory: Inventory, hosts: list[str] | None = None) -> dict[str, Any]:
    per_host: dict[str, Any] = {}
    groups: dict[str, list[str]] = {}
    for h in targets(step, inventory, hosts):
        st = state.status(step.id, h)
        out = state.outcome(step.id, h)
        per_host[h] = {
            "status": st.value,
            "exit_status": out.exit_status if out else None,
            "reason": state.reason(step.id, h),
            "action": out.action if out else None,
        }
        groups.setdefault(st.value, []).append(h)
    statuses = [Status(v["status"]) for v in per_host.values()]
    return {
        "id": step.id,
        "phase": step.phase,
        "title": step.title,
        "manual": step.manual,
        "status": step_status(statuses).value,
        "counts": {k: len(v) for k, v in sorted(groups.items())},
        "failing": fold(groups.get("fail", [])),
        "unknown": fold(groups.get("unknown", []) + groups.get("interrupted", [])),
        "blocked": fold(groups.get("blocked", [])),
        "waived": fold(groups.get("waived", [])),
        "hosts": per_host,
    }


def run_summary(state: RunState, steps: Iterable[Step], inventory: Inventory,
                hosts: list[str] | None = None, exit_code: int | None = None) -> dict[str, Any]:
    steps_out = [step_summary(state, s, inventory, hosts) for s in steps]
    pending = sorted(state.pending.values(), key=lambda p: (p["action"], p["host"]))
    owed: dict[str, list[str]] = {}
    for p in pending:
        owed.setdefault(p["action"], []).append(p["host"])
    doc = {
        "run": state.run.get("run_id", ""),
        "site": state.run.get("site", ""),
        "operator": state.run.get("operator", ""),
        "status": step_status([Status(s["status"]) for s in steps_out if not s["manual"]]).value,
        "steps": steps_out,
        "pending_actions": {a: fold(hs) for a, hs in owed.items()},
    }
    if exit_code is not None:
        doc["exit_code"] = exit_code
    return doc
