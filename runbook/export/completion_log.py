"""Build the completion log document from a store snapshot (docs/architecture.md, "One step, from its YAML to the signed log").

Everything that knows the snapshot's shape is in this file (the `_map_*`
functions): when the store changes a field name, only this file changes.
The document is then serialised by `canonical.canonical_bytes`.
"""

from __future__ import annotations

import json
from typing import Any

from ..inventory.secrets import redact
from ..store.canonical import GENESIS, canonical_bytes, genesis_of, sha256_hex
from . import log_versions, verdicts

FORMAT = "runbook-completion-log"
FORMAT_VERSION = 1

CANONICAL_FORM = (
    "RFC 8785 (JCS): UTF-8, no insignificant whitespace, object members sorted by UTF-16 code "
    "units, minimal string escapes, ECMAScript number form, no NaN/Infinity; integers beyond "
    "2^53 are written exactly. The signature covers exactly these bytes."
)

HASH_RULES = {
    "results[].output_sha256": "SHA-256 (hex) of the UTF-8 bytes of results[].stdout",
    "results[].stderr_sha256": "SHA-256 (hex) of the UTF-8 bytes of results[].stderr",
    "steps[].sha256": "SHA-256 (hex) of the UTF-8 bytes of steps[].definition_json, which is "
    "the step as written, as JSON with sorted keys and no spaces",
    "inventory.hosts_sha256": "SHA-256 (hex) of the canonical form of inventory.hosts",
    "journal.entries[].hash": "SHA-256 (hex) of the canonical form of {seq, prev, event}; "
    "prev is the previous entry's hash, or journal.genesis for the first",
    "journal.head": "the hash of the last journal entry",
    "journal.genesis": "64 zeros, or (when journal.header is present) the SHA-256 (hex) of the "
    "canonical form of journal.header: the first entry's prev",
    "step_versions[].sha256": "as steps[].sha256, for the other step versions the run used",
    "inventory_versions[].hosts_sha256": "as inventory.hosts_sha256, for the other inventories the run used",
    "results[].step_sha256": "steps[].sha256 or step_versions[].sha256 of the definition that "
    "judged the result",
}

CLAIMS = {
    "proves": [
        "Integrity: with a valid SSHSIG signature (namespace 'runbook') over these exact bytes, "
        "not one byte of this log has changed since it was signed.",
        "Signer: the signature was made with the private key whose fingerprint is "
        "signer.fingerprint; who holds that key is established by the verifier's "
        "allowed_signers file, not by this log.",
        "Internal consistency: every output matches its SHA-256, every step definition its "
        "SHA-256, the journal's hash chain links every entry to the next up to journal.head, "
        "and the summary follows from the results and decisions.",
    ],
    "does_not_prove": [
        "That any command really ran on a host, or that a host really printed the output "
        "recorded here: the log is what the tool saw, attested by the signer.",
        "When the log was signed: SSHSIG carries no trusted timestamp; the times in the log "
        "come from the signer's clock.",
        "That the hosts are the physical machines named: a host key fingerprint shows which "
        "key answered, not which box it is in.",
        "That the inventory and step files you hold are the ones used, unless you hash them "
        "and compare with the SHA-256 values recorded here.",
    ],
}


class SnapshotError(ValueError):
    """The snapshot lacks something the log needs."""


def build_document(snapshot: dict, signer: dict) -> dict:
    """The log as a plain dict; `signer` holds identity, key_type, fingerprint,
    public_key and allowed_signers (the line a verifier can use)."""
    for section in ("run", "steps", "results", "journal"):
        if section not in snapshot:
            raise SnapshotError(f"the store snapshot has no {section!r} section")
    run = _map_run(snapshot["run"], snapshot.get("decisions") or [])
    doc: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "canonical_form": CANONICAL_FORM,
        "hash_rules": HASH_RULES,
        "tool_version": run.pop("tool_version"),
        "run": run,
        "inventory": _map_inventory(snapshot.get("inventory") or {}),
        "steps": [_map_step(s) for s in snapshot["steps"]],
        "results": [_map_result(r) for r in snapshot["results"]],
        "decisions": [_map_decision(d) for d in snapshot.get("decisions") or []],
        "pending_actions": [_map_pending(p) for p in snapshot.get("pending_actions") or []],
        "host_keys": {str(h): jsonable(v) for h, v in (snapshot.get("host_keys") or {}).items()},
        "journal": _map_journal(snapshot["journal"], snapshot.get("head"), snapshot.get("journal_header")),
        "signer": dict(signer),
        "claims": CLAIMS,
    }
    _approved_commands(doc["decisions"], doc["results"])
    doc.update(log_versions.sections(snapshot, _map_step, _map_inventory, jsonable))
    try:
        doc["summary"] = verdicts.summarize(doc)
    except ValueError as exc:
        raise SnapshotError(f"the journal cannot be judged: {exc}") from None
    return doc


def _map_run(run: dict, decisions: list) -> dict:
    operators = [run.get("operator")] + [d.get("operator") for d in decisions]
    seen = list(dict.fromkeys(str(o) for o in operators if o))
    return {
        "run_id": text(run.get("run_id")),
        "site": text(run.get("site")),
        "operator": text(run.get("operator")),
        "operators": seen,
        "tool_version": text(run.get("tool_version")),
        "inventory_sha256": text(run.get("inventory_sha256")),
        "runbook_sha256": text(run.get("runbook_sha256")),
        "started": jsonable(run.get("started")),
        "ended": jsonable(run.get("ended")),
    }


def _map_inventory(inv: dict) -> dict:
    hosts = jsonable(redact(inv.get("hosts") or {}))  # also when the snapshot came from a file
    return {
        "sources": jsonable(inv.get("sources") or []),
        "sha256": text(inv.get("sha256")),
        "hosts": hosts,
        "hosts_sha256": sha256_hex(canonical_bytes(hosts)),
    }


def step_definition_json(definition: Any) -> str:
    """Exactly what runbook.definition.model.Step.sha256 hashes (kept in step with it by a test)."""
    return json.dumps(definition, sort_keys=True, separators=(",", ":"), default=str)


def _map_step(step: dict) -> dict:
    definition = step.get("definition") or {}
    return {
        "id": text(step.get("id")),
        "phase": text(step.get("phase")),
        "title": text(step.get("title")),
        "why": text(step.get("why")),
        "sha256": text(step.get("sha256")),
        "definition": jsonable(definition),
        "definition_json": step_definition_json(definition),
        # every host the step targets: each is judged in summary.step_status
        **({"targets": [text(h) for h in step["targets"]]} if step.get("targets") is not None else {}),
    }


def _map_result(r: dict) -> dict:
    stdout, stderr = text(r.get("stdout")), text(r.get("stderr"))
    return {
        "step_id": text(r.get("step_id")),
        "action": text(r.get("action")),
        "host": text(r.get("host")),
        "status": text(r.get("status")),
        "reason": text(r.get("reason")),
        "exit_status": jsonable(r.get("exit_status")),
        "command": text(r.get("command")),
        "stdout": stdout,
        "stderr": stderr,
        "output_sha256": sha256_hex(stdout),
        "stderr_sha256": sha256_hex(stderr),
        "started": jsonable(r.get("started")),
        "ended": jsonable(r.get("ended")),
        "attempts": jsonable(r.get("attempts")),
        "before": jsonable(r.get("before")),
        # the versions that judged it (log_versions.py), when the snapshot says
        **{k: text(r.get(k)) for k in ("step_sha256", "inventory_sha256") if k in r},
    }


def store_output_mismatches(snapshot: dict) -> list[str]:
    """Results whose store-recorded output_sha256 is not the SHA-256 of their stdout."""
    out = []
    for i, r in enumerate(snapshot.get("results") or []):
        recorded = r.get("output_sha256")
        if recorded and recorded != sha256_hex(text(r.get("stdout"))):
            out.append(
                f"results[{i}] (step {r.get('step_id')}, host {r.get('host')}): the "
                "store's output_sha256 is not the SHA-256 of its stdout"
            )
    return out


def _map_decision(d: dict) -> dict:
    hosts = d.get("hosts")
    return {
        "kind": text(d.get("kind")),
        "step_id": text(d.get("step_id")),
        "hosts": verdicts.fold(verdicts.expand(hosts)) if isinstance(hosts, list) else text(hosts),
        "operator": text(d.get("operator")),
        "reason": text(d.get("reason")),
        "time": jsonable(d.get("time")),
        "expires": jsonable(d.get("expires")),
    }


def _approved_commands(decisions: list[dict], results: list[dict]) -> None:
    """Each approval gets the commands as they ran on its hosts (the results of
    that apply or rollback after it), folded by NodeSet: the journal's reason
    names the step's template, the customer reads what was executed."""
    for d in decisions:
        if d["kind"] != "approve":
            continue
        action = d["reason"].split(" ", 1)[0]  # "apply confirmed: ..." / "rollback confirmed: ..."
        hosts = set(verdicts.expand(d["hosts"])) if d["hosts"] else set()
        start = d["time"] if isinstance(d["time"], (int, float)) else None
        by_command: dict[str, list[str]] = {}
        taken: set[str] = set()
        for r in results:
            if (
                (r["step_id"], r["action"]) != (d["step_id"], action)
                or r["host"] not in hosts
                or r["host"] in taken
            ):
                continue
            if start is not None and isinstance(r["started"], (int, float)) and r["started"] < start:
                continue
            taken.add(r["host"])  # the first run after the approval is the approved one
            by_command.setdefault(r["command"], []).append(r["host"])
        d["commands"] = [{"hosts": verdicts.fold(hs), "command": cmd} for cmd, hs in by_command.items()]


def _map_pending(p: dict) -> dict:
    return {k: jsonable(p.get(k)) for k in ("step_id", "host", "action", "state", "time")}


def _map_journal(entries: list, head: Any, header: Any = None) -> dict:
    # Entries are copied untouched: their hashes cover them as the store wrote them.
    # A format-2 journal chains its first entry to the hash of its header line.
    covered = isinstance(header, dict) and header.get("runbook_store") != 1
    genesis = genesis_of(header) if covered else GENESIS
    section = {
        "genesis": genesis,
        "entries": [{k: e.get(k) for k in ("seq", "prev", "hash", "event")} for e in entries],
        "head": head if head is not None else (entries[-1].get("hash") if entries else genesis),
    }
    if covered:
        section["header"] = jsonable(header)
    return section


def text(value: Any) -> str:
    """A string that is valid Unicode (outputs may carry undecodable bytes)."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    s = str(value)
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        raw = s.encode("utf-8", "surrogateescape" if _escaped_only(s) else "surrogatepass")
        return raw.decode("utf-8", "replace")


def _escaped_only(s: str) -> bool:
    return all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in s)


def jsonable(value: Any) -> Any:
    """JSON types only: tuples become lists, keys strings, other objects str()."""
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        finite = value == value and value not in (float("inf"), float("-inf"))
        return value if finite else str(value)
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return str(value)
