"""What a command works on: its steps, its hosts, and the hosts a new run contacts
first (light: `runbook run` decides these before it imports the session's modules)."""

from __future__ import annotations

from ..definition.model import Inventory, Runbook, Step
from ..definition.targets import ordered, targets
from ..errors import UsageError
from ..inventory.load import host_vars, select_hosts


def choose_steps(runbook: Runbook, step_ids: list[str] | None = None, phase: str | None = None) -> list[Step]:
    """The steps to run, in order (a usage error names what is unknown)."""
    try:
        return ordered(runbook, step_ids, phase)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None


def choose_hosts(inventory: Inventory, expr: str | None) -> list[str] | None:
    """--hosts: None means every targeted host."""
    if not expr:
        return None
    try:
        return select_hosts(inventory, expr)
    except (KeyError, ValueError) as exc:
        raise UsageError(f"--hosts {expr!r}: {exc.args[0] if exc.args else exc}") from None


def site_of(inventory: Inventory) -> str:
    for h in inventory.hosts:
        return str(host_vars(inventory, h).get("site", ""))
    return ""


def first_hosts(
    runbook: Runbook, inventory: Inventory, steps: list[Step], action: str, limit: list[str] | None
) -> list[str]:
    """The hosts a verify of `steps` contacts first in a new run (nothing recorded yet):
    those of its first step, if that step runs one command per host, less the hosts its
    `needs` block (nothing has passed yet) and those outside `limit`. [] when unsure."""
    if action != "verify":
        return []
    step = next((s for s in steps if not s.manual), None)
    if step is None or step.verify is None or step.kind != "each":
        return []
    from ..definition.model import Status
    from ..run.rules import blocked_reason

    wanted = set(limit) if limit is not None else None
    return [
        h
        for h in targets(step, inventory)
        if (wanted is None or h in wanted)
        and not blocked_reason(step, h, runbook, inventory, lambda _s, _h: Status.PENDING)
    ]
