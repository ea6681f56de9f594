"""What the human reports show, computed once from the log document (never
from the store: the report shows exactly what was signed). Markdown and HTML
only lay it out."""
from __future__ import annotations

import json
import re
import shlex
import time
from dataclasses import dataclass, field
from typing import Any

from ClusterShell.NodeSet import NodeSet, NodeSetException

from . import sshsig
from .verdicts import fold

# Glyphs carry the status without colour (print, colour blindness); the legend lists them.
GLYPH = {"pass": "✓", "fail": "✗", "unknown": "?", "skipped": "S", "waived": "W",
         "rolled_back": "R", "interrupted": "I", "blocked": "B", "pending": "·", "running": "…"}
STATUS_ORDER = ["fail", "unknown", "interrupted", "blocked", "rolled_back", "running",
                "pending", "waived", "skipped", "pass"]
EVIDENCE_STATUSES = ("fail", "unknown", "interrupted", "blocked")
EXCERPT_LINES = 6
EXCERPT_WIDTH = 200
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass
class Evidence:
    hosts: str  # folded NodeSet
    status: str
    reason: str
    exit_status: Any
    command: str
    excerpt: list[str]  # first lines of output, control characters made visible


@dataclass
class StepView:
    id: str
    title: str
    why: str
    status: str
    hosts_by_status: dict[str, str]  # status -> folded NodeSet, worst first
    evidence: list[Evidence] = field(default_factory=list)
    decisions: list[dict] = field(default_factory=list)


@dataclass
class PhaseView:
    name: str
    steps: list[StepView]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in self.steps:
            out[s.status] = out.get(s.status, 0) + 1
        return out


@dataclass
class ReportView:
    site: str
    run: dict
    tool_version: str
    phases: list[PhaseView]
    hosts: list[str]  # matrix rows, natural order
    step_ids: list[str]  # matrix columns
    verdicts: dict[str, dict]  # step -> host -> {status, reason, source}
    decisions: list[dict]
    open_pending: list[dict]
    changes: list[dict]
    host_keys: dict[str, dict]
    signer: dict
    log_name: str
    log_sha256: str
    verify_commands: list[str]
    # steps or inventory changed during the run (log_versions.py): when first used
    definition_changes: list[dict] = field(default_factory=list)


def when(value: Any) -> str:
    """An epoch time as UTC ISO-8601; anything else as given."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(value))
    return "" if value is None else str(value)


def exit_text(value: Any) -> str:
    return "none (did not run to completion)" if value is None else str(value)


def compact(value: Any) -> str:
    """A small JSON value on one line (`before` values)."""
    if value is None:
        return ""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))


def printable(line: str) -> str:
    """Control characters (ANSI escapes...) shown as \\xNN, long lines cut."""
    line = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", line)
    return line if len(line) <= EXCERPT_WIDTH else line[:EXCERPT_WIDTH] + " …"


def excerpt(result: dict) -> list[str]:
    text = result.get("stdout") or result.get("stderr") or ""
    lines = text.splitlines()
    cut = [printable(ln) for ln in lines[:EXCERPT_LINES]]
    if len(lines) > EXCERPT_LINES:
        cut.append(f"… ({len(lines) - EXCERPT_LINES} more lines in the log)")
    return cut


def natural_hosts(names: set[str]) -> list[str]:
    try:
        return list(NodeSet.fromlist(sorted(names)))
    except NodeSetException:
        return sorted(names)


def verify_commands(signer: dict, log_name: str) -> list[str]:
    """How the customer checks the log. The signer's public key must come from the
    signer (mail, a key server, their badge), never from the log: anyone who
    forges a log can put their own key and name in it."""
    ident = signer.get("identity") or "SIGNER"
    log, sig = shlex.quote(log_name), shlex.quote(log_name + ".sig")
    principal = shlex.quote(f'{ident} namespaces="{sshsig.NAMESPACE}"')
    return [
        "# signer.pub: the signer's public key, obtained from the signer, never from this log",
        f"echo {principal} \"$(cut -d' ' -f1,2 signer.pub)\" > allowed_signers",
        f"ssh-keygen -Y verify -f allowed_signers -I {shlex.quote(ident)} -n {sshsig.NAMESPACE} "
        f"-s {sig} < {log}",
        f"runbook verify-log {log} --allowed-signers allowed_signers --identity "
        f"{shlex.quote(ident)}",
    ]


def _step_view(step: dict, status: str, hosts: dict[str, dict], results: list[dict],
               decisions: list[dict]) -> StepView:
    by_status: dict[str, list[str]] = {}
    for host, v in hosts.items():
        by_status.setdefault(v["status"], []).append(host)
    ordered = {s: fold(by_status[s]) for s in STATUS_ORDER if s in by_status}
    ordered.update({s: fold(h) for s, h in by_status.items() if s not in ordered})
    groups: dict[tuple, list[str]] = {}
    for host, v in hosts.items():
        if v["status"] in EVIDENCE_STATUSES:
            groups.setdefault((v["status"], v.get("reason", "")), []).append(host)
    evidence = []
    for (st, reason), group in sorted(groups.items(), key=lambda kv: (
            STATUS_ORDER.index(kv[0][0]), kv[0][1])):
        first = natural_hosts(set(group))[0]
        src = hosts[first].get("source", "")
        res = results[int(src[8:-1])] if src.startswith("results[") else {}
        evidence.append(Evidence(fold(group), st, reason, res.get("exit_status"),
                                 res.get("command", ""), excerpt(res)))
    mine = [d for d in decisions if d.get("step_id") == step.get("id")]
    return StepView(step.get("id", ""), step.get("title", ""), step.get("why", ""), status,
                    ordered, evidence, mine)


def build_view(doc: dict, log_name: str, log_sha256: str) -> ReportView:
    summary = doc.get("summary", {})
    verdicts = summary.get("verdicts", {})
    statuses = summary.get("step_status", {})
    phases: dict[str, PhaseView] = {}
    for step in doc.get("steps", []):
        view = _step_view(step, statuses.get(step.get("id"), "pending"),
                          verdicts.get(step.get("id"), {}), doc.get("results", []),
                          doc.get("decisions", []))
        phases.setdefault(step.get("phase", ""), PhaseView(step.get("phase", ""), [])
                          ).steps.append(view)
    hosts = natural_hosts({h for per_host in verdicts.values() for h in per_host})
    signer = doc.get("signer", {})
    return ReportView(
        site=doc.get("run", {}).get("site", ""), run=doc.get("run", {}),
        tool_version=doc.get("tool_version", ""), phases=list(phases.values()), hosts=hosts,
        step_ids=[s.get("id", "") for s in doc.get("steps", [])], verdicts=verdicts,
        decisions=doc.get("decisions", []), open_pending=summary.get("open_pending_actions", []),
        changes=summary.get("changes", []), host_keys=doc.get("host_keys", {}), signer=signer,
        log_name=log_name, log_sha256=log_sha256,
        verify_commands=verify_commands(signer, log_name),
        definition_changes=doc.get("definition_changes") or [])


def definition_change_row(c: dict) -> list[str]:
    """When, what, during which step, from, to (short hashes, as `git log` shows them)."""
    what = "inventory" if c.get("kind") == "inventory" else "step definition"
    return [when(c.get("time")), what, str(c.get("step_id") or ""), str(c.get("from") or "")[:12],
            str(c.get("to") or "")[:12]]
