"""Wiring `runbook export` to the store: the snapshot of the run, with the
step definitions and inventory it was made with."""
from __future__ import annotations

from ..store.store import Store
from ..workspace.project import load_project


def load_snapshot(args) -> dict:
    project = load_project(args.steps, args.inventory, check=False)
    store = Store.open(args.state, getattr(args, "run", None), read_only=True)
    try:
        return store.snapshot(project.runbook, project.inventory)
    finally:
        store.close()
