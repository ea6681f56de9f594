"""Which versions of the steps and the inventory a run used, and when it
changed from one to the next -- read from the journal (StepStarted carries
the step's and the inventory's SHA-256) and the run's definitions record
(definitions.py). docs/state-directory.md describes both.

    definition_changes(journal_entries)   [{seq, time, kind, step_id, from, to}]
    snapshot(store, runbook, inventory)   the store snapshot, from the run's own
                                          definitions when it recorded them
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from . import snapshot as store_snapshot
from .definitions import RunDefinitions, inventory_from_record

if TYPE_CHECKING:
    from .store import Store


def definition_changes(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every point where the run started to use another version of a step or
    of the inventory: the first StepStarted that names the new SHA-256. (A
    version loaded but never used to run anything judged nothing: not listed.)"""
    out: list[dict[str, Any]] = []
    inventory = ""
    steps: dict[str, str] = {}
    for entry in entries:
        ev = entry.get("event") if isinstance(entry, dict) else None
        if not isinstance(ev, dict):
            continue
        if ev.get("type") == "RunStarted" and not inventory:
            inventory = str(ev.get("inventory_sha256") or "")
        if ev.get("type") != "StepStarted":
            continue
        step, sha = str(ev.get("step_id")), str(ev.get("step_sha256") or "")
        if sha:
            if steps.get(step, sha) != sha:
                out.append(
                    {
                        "seq": entry.get("seq"),
                        "time": ev.get("time"),
                        "kind": "step",
                        "step_id": step,
                        "from": steps[step],
                        "to": sha,
                    }
                )
            steps[step] = sha
        inv = str(ev.get("inventory_sha256") or "")
        if inv:
            if inventory and inv != inventory:
                out.append(
                    {
                        "seq": entry.get("seq"),
                        "time": ev.get("time"),
                        "kind": "inventory",
                        "step_id": step,
                        "from": inventory,
                        "to": inv,
                    }
                )
            inventory = inv
    return out


def used_versions(entries: Iterable[dict[str, Any]]) -> tuple[dict[tuple[str, str], float], dict[str, float]]:
    """(step_id, step sha256) and inventory sha256 -> when the journal first names them."""
    steps: dict[tuple[str, str], float] = {}
    inventories: dict[str, float] = {}
    for entry in entries:
        ev = entry.get("event") or {}
        if ev.get("type") in ("RunStarted", "StepStarted") and ev.get("inventory_sha256"):
            inventories.setdefault(ev["inventory_sha256"], ev.get("time"))
        if ev.get("type") == "StepStarted" and ev.get("step_sha256"):
            steps.setdefault((ev["step_id"], ev["step_sha256"]), ev.get("time"))
    return steps, inventories


def snapshot(store: Store, runbook: Any = None, inventory: Any = None) -> dict[str, Any]:
    """The store snapshot (snapshot.py). When the run recorded its definitions,
    its own latest runbook and inventory are used, whatever was passed in, and
    three more keys say what else it used:
      step_versions       [{id, phase, title, why, sha256, definition, first_used}]: the
                          other versions of steps that judged results of this run
      inventory_versions  [{sources, sha256, hosts, first_used}]: the other inventories
      definition_changes  definition_changes() of the journal
    Without a record (a run from before it was kept), the runbook and inventory
    passed in are used, as they always were."""
    record = RunDefinitions(store.directory)
    current = record.current()
    if current is not None:
        runbook, inventory = current
    snap = store_snapshot.build(store, runbook, inventory)
    snap["definition_changes"] = definition_changes(snap["journal"])
    if current is None:
        return snap
    steps_used, inventories_used = used_versions(snap["journal"])
    now = {s.id: s.sha256 for s in runbook.steps}
    versions = []
    for (step_id, sha), first in steps_used.items():
        definition = record.step_definition(sha)
        if now.get(step_id) == sha or definition is None:
            continue  # the current one is in `steps`; one never recorded cannot be shown
        versions.append(
            {
                "id": step_id,
                "phase": definition.get("phase", ""),
                "title": definition.get("title", ""),
                "why": " ".join(str(definition.get("why", "")).split()),
                "sha256": sha,
                "definition": definition,
                "first_used": first,
            }
        )
    snap["step_versions"] = versions
    inventories = []
    for sha, first in inventories_used.items():
        obj = record.inventory_object(sha)
        if sha == inventory.sha256 or obj is None:
            continue
        inv = inventory_from_record(obj)
        inventories.append(
            {
                "sources": list(inv.sources),
                "sha256": inv.sha256,
                "hosts": {name: dict(h.vars) for name, h in inv.hosts.items()},
                "first_used": first,
            }
        )
    snap["inventory_versions"] = inventories
    return snap
