"""The runbook and inventory a read-only command (status, export) shows a run
with: the run's own, recorded in its state directory (runbook/store/definitions.py),
so the command works anywhere with only --state. Step and inventory files
are read only for a run recorded before runs kept their definitions, or to
say that the files given differ from what the run used."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..definition.model import Inventory, Runbook
from .project import load_project

DEFAULT_STEPS = "steps"
DEFAULT_INVENTORY = "inventory"


@dataclass
class RunProject:
    runbook: Runbook
    inventory: Inventory
    recorded: bool  # from the run's own record (else from the files)
    notes: list[str] = field(default_factory=list)  # one line each, for stderr


def project_of_run(
    store, steps: str | None = None, inventory: str | None = None, *, check: bool = False
) -> RunProject:
    """steps/inventory: the paths the user gave (None when not given)."""
    recorded = store.recorded_definitions()
    if recorded is None:
        project = load_project(steps or DEFAULT_STEPS, inventory or DEFAULT_INVENTORY, check=check)
        return RunProject(project.runbook, project.inventory, recorded=False)
    runbook, inv = recorded
    notes = []
    if steps or inventory:
        given = load_project(steps or DEFAULT_STEPS, inventory or DEFAULT_INVENTORY, check=False)
        if steps and given.runbook.sha256 != runbook.sha256:
            notes.append(
                f"{steps}: not the steps run {store.run_id} last ran with; using the run's "
                "own definitions (a run of `runbook run` records new ones)"
            )
        if inventory and given.inventory.sha256 != inv.sha256:
            notes.append(
                f"{inventory}: not the inventory run {store.run_id} last ran with; using the run's own"
            )
    return RunProject(runbook, inv, recorded=True, notes=notes)
