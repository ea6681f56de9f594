"""Which steps run, in which order, on which hosts."""

from __future__ import annotations

from ..inventory.load import select_hosts
from .model import Inventory, Runbook, Step


def ordered(runbook: Runbook, step_ids: list[str] | None = None, phase: str | None = None) -> list[Step]:
    """Steps in runbook order, moved after their `needs` when a file lists them earlier."""
    chosen = runbook.steps
    if phase is not None:
        chosen = [s for s in chosen if s.phase == phase]
        if not chosen:
            raise KeyError(f"no phase {phase!r} (phases: {', '.join(p.name for p in runbook.phases)})")
    if step_ids:
        known = {s.id for s in runbook.steps}
        unknown = [s for s in step_ids if s not in known]
        if unknown:
            raise KeyError(f"unknown step(s): {', '.join(unknown)}")
        chosen = [s for s in chosen if s.id in step_ids]
    by_id = {s.id: s for s in chosen}
    done: list[Step] = []
    placed: set[str] = set()

    def place(step: Step, trail: frozenset) -> None:
        if step.id in placed or step.id in trail:
            return
        for need in step.needs:
            if need in by_id:
                place(by_id[need], trail | {step.id})
        placed.add(step.id)
        done.append(step)

    for s in chosen:
        place(s, frozenset())
    return done


def targets(step: Step, inventory: Inventory, limit: list[str] | None = None) -> list[str]:
    hosts = select_hosts(inventory, step.hosts)
    if limit is not None:
        wanted = set(limit)
        hosts = [h for h in hosts if h in wanted]
    return hosts
