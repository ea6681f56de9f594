"""`Store.snapshot(runbook=None, inventory=None)`: the whole run as one
JSON-able dict -- what `runbook export` turns into the signed completion log.

Keys:
  format, format_version  "runbook-store-snapshot", 1
  run            run_info(): run_id, site, operator, tool_version, inventory_sha256,
                 runbook_sha256, started, ended (time of the last RunFinished, else
                 None), status, events, head, directory, journal, interruptions, ...
  steps          [{id, phase, title, why, sha256, definition, targets}] from the Runbook passed
                 in (the store keeps hashes, not definitions); without one, only
                 {id, sha256 as last recorded} for the steps the journal knows
  inventory      {sources, sha256, hosts: {name: merged vars}} from the Inventory
                 passed in, else {}; per host only the variables the runbook uses and its
                 addressing, secrets redacted (runbook/inventory/secrets.py)
  results        one per (step, action, host), its latest record: step_id, action, host,
                 status (as recorded), reason, exit_status, command, stdout, stderr,
                 output_sha256, stderr_sha256, started, ended, attempts (the attempt
                 number of that run, HostFinished.attempt), runs (times it was started in
                 this run), before, record, step_sha256, inventory_sha256, seq, stale
  statuses       {step: {host: effective status}}  (host_status: skips/waivers applied)
  step_status    {step: status derived from its hosts}
  decisions      [{kind, step_id, hosts, operator, reason, time, expires, expired}]
  pending_actions  [{step_id, host, action, state, reason, time, since}], open ones (rules.still_owed)
  host_keys      {host: {fingerprint, how, time}}
  interrupted    {step: [hosts]}
  stale          {step: reason} from the last stale_steps() call ({} if never asked)
  journal        [{seq, prev, hash, event}], every entry exactly as written
  journal_header the journal's header line (format 2: the first entry's prev is its hash)
  head           hash of the last entry
  outputs        {sha256: text}: every output the journal keeps in a blob (those
                 HostFinished events carry only stdout_sha256 / stderr_sha256)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..criteria.design_reads import design_roots
from ..definition.model import Status
from ..definition.targets import targets
from ..inventory.secrets import run_variables, used_roots
from ..run import rules
from .journal import blob_refs

if TYPE_CHECKING:
    from .store import Store

FORMAT = "runbook-store-snapshot"
FORMAT_VERSION = 1


def _targets(step: Any, inventory: Any) -> list[str] | None:
    """The hosts the step targets (every one is judged in the log), when known."""
    if inventory is None:
        return None
    try:
        return targets(step, inventory)
    except (KeyError, ValueError):
        return None


def _steps(store: Store, runbook: Any, inventory: Any) -> list[dict[str, Any]]:
    if runbook is not None:
        return [
            {
                "id": s.id,
                "phase": s.phase,
                "title": s.title,
                "why": s.why,
                "sha256": s.sha256,
                "definition": s.definition,
                "targets": _targets(s, inventory),
            }
            for s in runbook.steps
        ]
    return [{"id": s, "sha256": store.state.step_hashes.get(s, "")} for s in store.state.step_ids()]


def _inventory(inventory: Any, runbook: Any = None) -> dict[str, Any]:
    if inventory is None:
        return {}
    roots = used_roots(runbook) | design_roots(runbook)  # what the commands and the design comparisons read
    hosts = {name: run_variables(h.vars, roots) for name, h in inventory.hosts.items()}
    return {"sources": list(inventory.sources), "sha256": inventory.sha256, "hosts": hosts}


def build(store: Store, runbook: Any = None, inventory: Any = None) -> dict[str, Any]:
    journal = store.journal()
    outputs: dict[str, str] = {}
    for entry in journal:
        for name, sha in blob_refs(entry["event"]):
            if sha not in outputs:
                outputs[sha] = store._blobs.get(sha, f"{name} of event {entry['seq']}")
    step_ids = [s.id for s in runbook.steps] if runbook is not None else store.state.step_ids()
    statuses = {s: {h: st.value for h, st in store.step_hosts(s).items()} for s in step_ids}
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "run": store.run_info(),
        "steps": _steps(store, runbook, inventory),
        "inventory": _inventory(inventory, runbook),
        "results": [store.result_view(r) for r in store.index.by_action.values()],
        "statuses": statuses,
        "step_status": {
            s: rules.step_status([Status(v) for v in hs.values()]).value for s, hs in statuses.items()
        },
        "decisions": store.decisions(),
        "pending_actions": store.pending_actions(),
        "host_keys": store.host_keys(),
        "interrupted": store.interrupted(),
        "stale": dict(store._stale),
        "journal": journal,
        "journal_header": store.header,
        "head": store.head(),
        "outputs": outputs,
    }
