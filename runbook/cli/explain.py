"""Why hosts are unknown or blocked, in words, folded by NodeSet, with what to
run next: the lines the CLI prints under its summary table.

    unknown: gpu[01-48],sm[01-02] — host key: no known key for these hosts (pin them with --trust-new-hosts)
    blocked: link-type-ib on gpu[01-04] — needs mst-started, which has not run: run it first
             (runbook run --step mst-started), or run the phase (runbook run --phase nic-mode)

It reads only the summary document (`runbook run --json` / `status --json`):
each host's status and reason there are the run layer's; this module words
them for a person and groups the hosts that share one."""

from __future__ import annotations

import re
from typing import Any

from ..inventory.load import fold

MAX_LINES = 12  # the rest is in `runbook status --json`

_NEEDS_HERE = re.compile(r"needs (?P<need>\S+), which is (?P<status>\w+) on this host")
_NEEDS_THERE = re.compile(r"needs (?P<need>\S+), not yet passed on (?P<where>.+)")


def _unknown_words(reason: str, host: str) -> str:
    """One wording per cause, the same for every host it hits (names and addresses out)."""
    r = reason.replace(host, "{host}")
    if not r:
        return "no reason recorded"
    if r.startswith("interrupted"):
        return "interrupted: the run stopped while a command was in flight (runbook run --resume re-runs it)"
    if "no known key for" in r:
        return "host key: no known key for these hosts (pin them with --trust-new-hosts)"
    if m := re.search(r"host key for \{host\} changed: .*remove the old key from (\S+)", r):
        return (
            f"host key: changed since it was recorded (if these nodes were reinstalled, remove their old "
            f"keys from {m.group(1)})"
        )
    if "no longer offers a host key of the known type" in r:
        return "host key: the node no longer offers a key of the known type (reinstalled?)"
    if r.startswith("auth refused"):
        return "login refused: none of our keys was accepted (check ansible_user and ansible_ssh_private_key_file)"
    if r.startswith("unreachable: connect timeout"):
        return "unreachable: no answer within the connect timeout (powered off, wrong address, or a firewall)"
    if r.startswith("unreachable: connection refused"):
        return r.replace("{host}", "the host") + " (sshd not running, or wrong ansible_port)"
    if r.startswith("timeout"):
        return f"{r} (the command did not finish in time)"
    return r.replace("{host}", "the host")


def _blocked_words(reason: str, phase_of: dict[str, str], fixable: set[str] | None) -> str:
    if m := _NEEDS_HERE.search(reason):
        need, status = m["need"], m["status"]
        run_it = f"runbook run --step {need}"
        phase = phase_of.get(need)
        if status in ("pending", "interrupted", "running"):
            where = f", or run the phase (runbook run --phase {phase})" if phase else ""
            return f"needs {need}, which has not run: run it first ({run_it}){where}"
        if status == "fail":
            how = (
                f"{run_it} --action apply"
                if fixable is None or need in fixable
                else "by hand, then re-verify"
            )
            return f"needs {need}, which fails on these hosts: fix it first ({how}), or waive it"
        if status == "unknown":
            return f"needs {need}, which could not be assessed on these hosts (see unknown above)"
        if status == "blocked":
            return f"needs {need}, which is blocked itself (see its line)"
        return f"needs {need}, which is {status} on these hosts"
    if m := _NEEDS_THERE.search(reason):
        return (
            f"needs {m['need']}, not yet passed on {m['where']}: "
            f"run or fix it first (runbook run --step {m['need']})"
        )
    return reason or "no reason recorded"


def explain(
    doc: dict[str, Any], phase_of: dict[str, str] | None = None, fixable: set[str] | None = None
) -> list[str]:
    """The lines for unknown and blocked hosts of a summary document, most hosts
    first; `phase_of` (step id -> phase) names the phase of a prerequisite that
    was not part of the run, `fixable` the steps that have an apply."""
    phase_of = {**{s["id"]: s["phase"] for s in doc.get("steps", [])}, **(phase_of or {})}
    unknown: dict[str, tuple[set[str], list[str]]] = {}
    blocked: dict[str, tuple[set[str], list[str]]] = {}
    for s in doc.get("steps", []):
        for host, h in s.get("hosts", {}).items():
            status = h.get("status")
            if status in ("unknown", "interrupted"):
                key, into = _unknown_words(h.get("reason") or "", host), unknown
            elif status == "blocked":
                key, into = _blocked_words(h.get("reason") or "", phase_of, fixable), blocked
            else:
                continue
            hosts, steps = into.setdefault(key, (set(), []))
            hosts.add(host)
            if s["id"] not in steps:
                steps.append(s["id"])
    lines = []
    for words, (hosts, steps) in sorted(unknown.items(), key=lambda kv: -len(kv[1][0])):
        lines.append(f"unknown: {fold(sorted(hosts))} — {words}{_in_steps(steps)}")
    for words, (hosts, steps) in sorted(blocked.items(), key=lambda kv: -len(kv[1][0])):
        lines.append(f"blocked: {_steps_text(steps)} on {fold(sorted(hosts))} — {words}")
    if len(lines) > MAX_LINES:
        more = len(lines) - MAX_LINES
        lines = lines[:MAX_LINES] + [f"... and {more} more (runbook status --json has every host's reason)"]
    return lines


def _in_steps(steps: list[str]) -> str:
    return f" ({len(steps)} steps)" if len(steps) > 1 else f" ({steps[0]})"


def _steps_text(steps: list[str]) -> str:
    if len(steps) <= 3:
        return ", ".join(steps)
    return f"{len(steps)} steps ({', '.join(steps[:3])}, ...)"
