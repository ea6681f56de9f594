"""The log's record of which step and inventory versions the run used
(docs/state-directory.md): sections built from the store snapshot, and the
checks verify-log makes of them.

    step_versions       [{id, phase, title, why, sha256, definition, definition_json,
                          first_used}]: versions other than those in `steps` that judged
                          results of the run
    inventory_versions  [{sources, sha256, hosts, hosts_sha256, first_used}]: inventories
                          other than `inventory` the run used
    definition_changes  [{seq, time, kind: step|inventory, step_id, from, to}]: when the
                          run first used a new version (the StepStarted that names it)
    results[].step_sha256, results[].inventory_sha256: the versions that judged each result

The first two are present only for a run that recorded its definitions; the
changes and the per-result versions are always derived from the journal, so
verify-log recomputes them and names any difference.
"""

from __future__ import annotations

import json
from typing import Any

from ..store.canonical import canonical_bytes, sha256_hex
from ..store.definition_history import definition_changes


def sections(snapshot: dict, map_step, map_inventory, jsonable) -> dict[str, Any]:
    """The version sections of the log (the mapping functions are completion_log's)."""
    out: dict[str, Any] = {
        "definition_changes": [
            {k: jsonable(c.get(k)) for k in ("seq", "time", "kind", "step_id", "from", "to")}
            for c in snapshot.get("definition_changes") or definition_changes(snapshot.get("journal") or [])
        ]
    }
    if "step_versions" in snapshot:
        out["step_versions"] = [
            dict(map_step(s), first_used=jsonable(s.get("first_used"))) for s in snapshot["step_versions"]
        ]
    if "inventory_versions" in snapshot:
        out["inventory_versions"] = [
            dict(map_inventory(i), first_used=jsonable(i.get("first_used")))
            for i in snapshot["inventory_versions"]
        ]
    return out


def inventory_hashes(doc: dict) -> set[str]:
    """Every inventory SHA-256 the log holds the inventory of."""
    hashes = {(doc.get("inventory") or {}).get("sha256")}
    hashes.update(i.get("sha256") for i in doc.get("inventory_versions") or [])
    return {h for h in hashes if h}


def check(doc: dict, valid: set[int], problems: list[str]) -> None:
    """valid: indexes of journal entries whose hash is intact (checks.py)."""
    entries = doc["journal"]["entries"]
    for i, s in enumerate(doc.get("step_versions") or []):
        name = f"step_versions[{i}] ({s.get('id')})"
        if sha256_hex(s["definition_json"]) != s.get("sha256"):
            problems.append(f"{name}: sha256 does not match its definition")
        elif json.loads(s["definition_json"]) != s.get("definition"):
            problems.append(f"{name}: definition is not the one that was hashed (definition_json)")
    for i, inv in enumerate(doc.get("inventory_versions") or []):
        if sha256_hex(canonical_bytes(inv["hosts"])) != inv.get("hosts_sha256"):
            problems.append(f"inventory_versions[{i}].hosts_sha256: does not match its hosts")
    intact = [e for j, e in enumerate(entries) if j in valid]
    if "definition_changes" in doc:
        expected = json.loads(json.dumps(definition_changes(intact)))
        if doc["definition_changes"] != expected:
            problems.append("definition_changes: does not follow from the journal's StepStarted events")
    _check_result_versions(doc, intact, problems)


def _judged_by(entries: list[dict]) -> dict[tuple, tuple[str, str]]:
    """(step, action, host) -> (step sha256, inventory sha256) of its latest
    HostStarted/HostFinished, by the store's rule (runbook/store/index.py): the step's
    latest StepStarted that names them, else the run's inventory."""
    run_inventory = ""
    step_sha: dict[str, str] = {}
    step_inv: dict[str, str] = {}
    out: dict[tuple, tuple[str, str]] = {}
    for e in entries:
        ev = e.get("event") or {}
        kind, step = ev.get("type"), ev.get("step_id")
        if kind == "RunStarted" and not run_inventory:
            run_inventory = ev.get("inventory_sha256") or ""
        elif kind == "StepStarted":
            if ev.get("step_sha256"):
                step_sha[step] = ev["step_sha256"]
            if ev.get("inventory_sha256"):
                step_inv[step] = ev["inventory_sha256"]
        elif kind in ("HostStarted", "HostFinished"):  # the later one is the result
            out[(step, ev.get("action"), ev.get("host"))] = (
                step_sha.get(step, ""),
                step_inv.get(step, run_inventory),
            )
    return out


def _check_result_versions(doc: dict, entries: list[dict], problems: list[str]) -> None:
    judged = _judged_by(entries)
    known_steps: set[tuple[str, str]] = {(s.get("id"), s.get("sha256")) for s in doc["steps"]}
    known_steps.update((s.get("id"), s.get("sha256")) for s in doc.get("step_versions") or [])
    inventories = inventory_hashes(doc)
    for i, r in enumerate(doc["results"]):
        if "step_sha256" not in r:
            continue  # a log from before results named their versions
        name = f"results[{i}] (step {r.get('step_id')}, host {r.get('host')})"
        key = (r.get("step_id"), r.get("action"), r.get("host"))
        if key in judged and (r.get("step_sha256"), r.get("inventory_sha256")) != judged[key]:
            problems.append(
                f"{name}: step_sha256/inventory_sha256 are not the versions the journal "
                "started it with (StepStarted)"
            )
            continue
        if (
            "step_versions" in doc
            and r.get("step_sha256")
            and (r.get("step_id"), r["step_sha256"]) not in known_steps
        ):
            problems.append(
                f"{name}: judged by step version {r['step_sha256'][:12]}, which is in "
                "neither steps nor step_versions"
            )
        if (
            "inventory_versions" in doc
            and r.get("inventory_sha256")
            and r["inventory_sha256"] not in inventories
        ):
            problems.append(
                f"{name}: judged with inventory {r['inventory_sha256'][:12]}, which is in "
                "neither inventory nor inventory_versions"
            )
