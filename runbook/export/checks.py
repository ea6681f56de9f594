"""Content checks of a parsed completion log, in a fixed order, each problem
naming the element that broke (`results[12] (step X, host Y): ...`).

Order: format, journal chain, run, inventory, steps, results, decisions,
pending actions, host keys, summary, signer. The journal comes before the sections
cross-checked against it, so a changed journal entry is named as itself and
not as the result that no longer agrees with it (cross-checks only use
entries whose hash is intact).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..store.canonical import (
    GENESIS,
    CanonicalError,
    canonical_bytes,
    header_genesis,
    journal_entry_hash,
    sha256_hex,
)
from . import completion_log, log_versions, verdicts

# Result statuses that may legitimately have no finished event behind them yet.
_UNFINISHED = ("interrupted", "running", "pending")
# Result field -> HostFinished field it must equal.
_RESULT_VS_EVENT = {
    "status": "status",
    "reason": "reason",
    "exit_status": "exit_status",
    "command": "command",
    "stdout": "stdout",
    "stderr": "stderr",
    "started": "started",
    "ended": "ended",
    "attempts": "attempt",
    "before": "before",
}


@dataclass
class Findings:
    problems: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    unbacked_results: int = 0  # results with no finished event in the journal


def check_document(doc: Any) -> Findings:
    f = Findings()
    if not isinstance(doc, dict):
        f.problems.append("document: not a JSON object")
        return f
    if doc.get("format") != completion_log.FORMAT:
        f.problems.append(f"format: {doc.get('format')!r} is not {completion_log.FORMAT!r}")
        return f
    if doc.get("format_version") != completion_log.FORMAT_VERSION:
        f.problems.append(
            f"format_version: {doc.get('format_version')!r} is not supported "
            f"(this verifier reads {completion_log.FORMAT_VERSION})"
        )
        return f
    try:
        journal = _check_journal(doc, f)
        _check_run(doc, journal, f)
        _check_inventory(doc, f)
        _check_steps(doc, f)
        _check_results(doc, journal, f)
        _check_decisions(doc, journal, f)
        _check_pending(doc, journal, f)
        _check_host_keys(doc, journal, f)
        _check_summary(doc, f)
        log_versions.check(doc, {i for i, _ in journal.events}, f.problems)
        signer = doc.get("signer")
        if not isinstance(signer, dict) or not signer.get("fingerprint"):
            f.problems.append("signer: the log does not name the key that signed it")
    except (KeyError, TypeError, AttributeError, CanonicalError) as exc:
        f.problems.append(f"document: malformed section ({type(exc).__name__}: {exc})")
    return f


class _Journal:
    """Valid events by type, in journal order, with their index."""

    def __init__(self) -> None:
        self.events: list[tuple[int, dict]] = []

    def of_type(self, name: str) -> list[tuple[int, dict]]:
        return [(i, e) for i, e in self.events if e.get("type") == name]


def _check_journal(doc: dict, f: Findings) -> _Journal:
    section = doc["journal"]
    entries = section["entries"]
    good = _Journal()
    header = section.get("header")
    genesis = GENESIS if header is None else (header_genesis(header) if isinstance(header, dict) else None)
    prev = genesis
    first_seq = entries[0].get("seq") if entries else 0
    for i, e in enumerate(entries):
        event = e.get("event") or {}
        name = f"journal.entries[{i}] (seq {e.get('seq')}, {event.get('type', '?')})"
        ok = True
        if not isinstance(first_seq, int) or e.get("seq") != first_seq + i:
            f.problems.append(
                f"{name}: seq is {e.get('seq')!r}, expected {first_seq + i!r} "
                "(entries reordered, removed or inserted)"
            )
            ok = False
        elif e.get("prev") != prev:
            what = "journal.genesis" if i == 0 else f"the hash of journal.entries[{i - 1}]"
            f.problems.append(f"{name}: prev is not {what} (the chain is broken here)")
            ok = False
        elif journal_entry_hash(e["seq"], e["prev"], event) != e.get("hash"):
            f.problems.append(f"{name}: hash does not match its content")
            ok = False
        if ok:
            good.events.append((i, event))
        prev = e.get("hash")
    last = entries[-1].get("hash") if entries else genesis
    if section.get("head") != last:
        f.problems.append(
            f"journal.head: is not the hash of the last entry "
            f"journal.entries[{len(entries) - 1}] (journal truncated or extended)"
        )
    if section.get("genesis") != genesis:
        f.problems.append(
            "journal.genesis: is not 64 zeros"
            if header is None
            else "journal.genesis: is not the hash of journal.header"
        )
    if isinstance(header, dict) and header.get("run_id") != (doc.get("run") or {}).get("run_id"):
        f.problems.append("journal.header: run_id is not run.run_id")
    f.counts["journal"] = len(entries)
    return good


def _check_run(doc: dict, journal: _Journal, f: Findings) -> None:
    started = journal.of_type("RunStarted")
    if not started:
        return
    i, ev = started[0]
    run = dict(doc["run"], tool_version=doc.get("tool_version"))
    for field_name in ("run_id", "site", "operator", "tool_version", "inventory_sha256", "runbook_sha256"):
        if field_name in ev and run.get(field_name) != ev[field_name]:
            f.problems.append(f"run.{field_name}: does not match journal.entries[{i}] (RunStarted)")
            return
    if _both_numbers(run.get("started"), ev.get("time")) and run["started"] != ev["time"]:
        f.problems.append(f"run.started: does not match journal.entries[{i}] (RunStarted)")
        return
    ended = run.get("ended")
    enders = journal.of_type("RunFinished") + journal.of_type("RunInterrupted")
    if _both_numbers(ended, 0) and not any(ev.get("time") == ended for _, ev in enders):
        f.problems.append(
            "run.ended: no RunFinished or RunInterrupted entry of the journal has "
            "this time (journal truncated?)"
        )


def _check_inventory(doc: dict, f: Findings) -> None:
    inv = doc["inventory"]
    if sha256_hex(canonical_bytes(inv["hosts"])) != inv.get("hosts_sha256"):
        f.problems.append("inventory.hosts_sha256: does not match inventory.hosts")
    elif (
        inv.get("sha256")
        and doc["run"].get("inventory_sha256")
        and doc["run"]["inventory_sha256"] not in log_versions.inventory_hashes(doc)
    ):
        # (an inventory changed during the run: the first one is in inventory_versions)
        f.problems.append("inventory.sha256: is not run.inventory_sha256 (nor is any of inventory_versions)")
    f.counts["hosts"] = len(inv["hosts"])


def _check_steps(doc: dict, f: Findings) -> None:
    seen: set[str] = set()
    for i, s in enumerate(doc["steps"]):
        name = f"steps[{i}] ({s.get('id')})"
        if s.get("id") in seen:
            f.problems.append(f"{name}: the step id appears twice")
        seen.add(s.get("id"))
        if sha256_hex(s["definition_json"]) != s.get("sha256"):
            f.problems.append(f"{name}: sha256 does not match its definition")
        elif json.loads(s["definition_json"]) != s.get("definition"):
            f.problems.append(f"{name}: definition is not the one that was hashed (definition_json)")
    f.counts["steps"] = len(doc["steps"])


def _check_results(doc: dict, journal: _Journal, f: Findings) -> None:
    step_ids = {s.get("id") for s in doc["steps"]}
    step_ids.update(s.get("id") for s in doc.get("step_versions") or [])  # a step removed since
    # The latest event of each (step, action, host): a result started again and
    # never finished (interrupted) is backed by that start, not an older finish.
    finished: dict[tuple, tuple[int, dict] | None] = {}
    for i, ev in journal.events:
        if ev.get("type") in ("HostStarted", "HostFinished"):
            key = (ev.get("step_id"), ev.get("action"), ev.get("host"))
            finished[key] = (i, ev) if ev.get("type") == "HostFinished" else None
    for i, r in enumerate(doc["results"]):
        name = f"results[{i}] (step {r.get('step_id')}, host {r.get('host')})"
        if r.get("step_id") not in step_ids:
            f.problems.append(f"{name}: refers to a step that is not in steps (nor in step_versions)")
        if sha256_hex(r["stdout"]) != r.get("output_sha256"):
            f.problems.append(f"{name}: output_sha256 does not match its output")
        if sha256_hex(r["stderr"]) != r.get("stderr_sha256"):
            f.problems.append(f"{name}: stderr_sha256 does not match its stderr")
        hit = finished.get((r.get("step_id"), r.get("action"), r.get("host")))
        if hit is None:
            if r.get("status") not in _UNFINISHED:
                f.problems.append(f"{name}: a {r.get('status')} result with no finished event in the journal")
            f.unbacked_results += 1
            continue
        j, ev = hit
        for ours, theirs in _RESULT_VS_EVENT.items():
            if theirs in ev and r.get(ours) != ev[theirs]:
                f.problems.append(f"{name}: {ours} does not match journal.entries[{j}] (HostFinished)")
                break
    f.counts["results"] = len(doc["results"])


def _check_decisions(doc: dict, journal: _Journal, f: Findings) -> None:
    events = journal.of_type("OperatorDecision")
    for i, d in enumerate(doc["decisions"]):
        same = [
            (j, ev)
            for j, ev in events
            if (ev.get("kind"), ev.get("step_id"), ev.get("time"))
            == (d.get("kind"), d.get("step_id"), d.get("time"))
        ]
        if not same:
            continue
        j, ev = same[-1]
        ev_hosts = verdicts.fold(verdicts.expand(ev.get("hosts")))
        for key, theirs in (
            ("hosts", ev_hosts),
            ("operator", ev.get("operator")),
            ("reason", ev.get("reason")),
            ("expires", ev.get("expires")),
        ):
            mine = verdicts.fold(verdicts.expand(d.get("hosts"))) if key == "hosts" else d.get(key)
            if mine != theirs:
                f.problems.append(
                    f"decisions[{i}] ({d.get('kind')} {d.get('step_id')}): {key} "
                    f"does not match journal.entries[{j}] (OperatorDecision)"
                )
                break


def _check_pending(doc: dict, journal: _Journal, f: Findings) -> None:
    events = journal.of_type("PendingActionChanged")
    for i, p in enumerate(doc["pending_actions"]):
        key = (p.get("step_id"), p.get("host"), p.get("action"), p.get("state"))
        same = [
            ev
            for _, ev in events
            if (ev.get("step_id"), ev.get("host"), ev.get("action"), ev.get("state")) == key
        ]
        if same and all(ev.get("time") != p.get("time") for ev in same):
            f.problems.append(
                f"pending_actions[{i}] ({p.get('action')} on {p.get('host')}): "
                "time does not match the journal (PendingActionChanged)"
            )


def _check_host_keys(doc: dict, journal: _Journal, f: Findings) -> None:
    recorded: dict[str, tuple[int, dict]] = {}
    for j, ev in journal.of_type("HostKeyRecorded"):
        recorded[ev.get("host")] = (j, ev)
    for host, key in sorted(doc["host_keys"].items()):
        if host in recorded:
            j, ev = recorded[host]
            if key.get("fingerprint") != ev.get("fingerprint"):
                f.problems.append(
                    f"host_keys[{host}]: fingerprint does not match journal.entries[{j}] (HostKeyRecorded)"
                )
    f.counts["host_keys"] = len(doc["host_keys"])


def _check_summary(doc: dict, f: Findings) -> None:
    # The verdicts are derived again by the rulebook from the log's own journal.
    try:
        expected = verdicts.summarize(doc)
    except ValueError as exc:
        f.problems.append(f"journal: the run cannot be replayed ({exc})")
        return
    where = first_difference(doc.get("summary"), expected, "summary")
    if where:
        f.problems.append(f"{where}: is not what the rulebook derives from the log's journal")


def first_difference(a: Any, b: Any, path: str) -> str | None:
    """The path of the first place where two JSON values differ, or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(b) + [k for k in a if k not in b]:
            d = first_difference(a.get(k), b.get(k), f"{path}.{k}") if k in a and k in b else f"{path}.{k}"
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None if len(a) == len(b) else f"{path}[{min(len(a), len(b))}]"
    return None if a == b and type(a) is type(b) or _both_numbers(a, b) and a == b else path


def _both_numbers(a: Any, b: Any) -> bool:
    return all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
