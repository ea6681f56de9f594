"""Wiring `runbook export` to the store: the snapshot of the run, with the
step definitions and inventory it ran with (its own record; the files given
by --steps/--inventory only for a run recorded before runs kept theirs)."""

from __future__ import annotations

from ..store.store import Store
from ..workspace.project import eprint
from ..workspace.run_project import project_of_run


def load_snapshot(args) -> dict:
    store = Store.open(args.state, getattr(args, "run", None), read_only=True)
    try:
        project = project_of_run(store, getattr(args, "steps", None), getattr(args, "inventory", None))
        for note in project.notes:
            eprint(f"runbook export: {note}")
        return store.snapshot(project.runbook, project.inventory)
    finally:
        store.close()
