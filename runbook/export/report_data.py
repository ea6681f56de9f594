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

from ..criteria.describe import describe
from ..criteria.spec import parse_check
from ..definition.kinds import launch_variables
from ..definition.model import Status
from ..run import rules
from . import sshsig
from .pair_view import kind_pictures
from .rail_view import rail_pictures
from .topology_view import topology_pictures
from .verdicts import fold

# Glyphs carry the status without colour (print, colour blindness); the legend lists them.
GLYPH = {
    "pass": "✓",
    "fail": "✗",
    "unknown": "?",
    "skipped": "S",
    "waived": "W",
    "rolled_back": "R",
    "interrupted": "I",
    "blocked": "B",
    "pending": "·",
    "running": "…",
    "not_applicable": "–",
}
STATUS_ORDER = [
    "fail",
    "unknown",
    "interrupted",
    "blocked",
    "rolled_back",
    "running",
    "pending",
    "waived",
    "skipped",
    "pass",
    "not_applicable",
]
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
    excerpt: list[str]  # the failing part of the output, control characters made visible
    first_line: int = 1  # the excerpt's first line number in the output


@dataclass
class StepView:
    id: str
    title: str
    why: str
    status: str
    hosts_by_status: dict[str, str]  # status -> folded NodeSet, worst first
    evidence: list[Evidence] = field(default_factory=list)
    decisions: list[dict] = field(default_factory=list)
    criteria: list[str] = field(default_factory=list)  # with the first targeted host's values


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
    verdict: str = "pending"  # the run's overall verdict (rules.run_status)
    exit_code: int = 3
    open_items: list[str] = field(default_factory=list)
    waivers: list[dict] = field(default_factory=list)
    scope: dict = field(default_factory=dict)
    appendix: list[tuple[str, str]] = field(default_factory=list)  # (label, long before value)
    rail_pictures: list = field(default_factory=list)  # rail_view.RailPicture, one per rail-cabling step
    # pair_view.PairPicture / LaunchPicture, one per pairs: / launch: step with results
    kind_pictures: list = field(default_factory=list)
    topology_pictures: list = field(default_factory=list)  # topology_view.TopoPicture


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
        f"runbook verify-log {log} --allowed-signers allowed_signers --identity {shlex.quote(ident)}",
    ]


def _step_view(
    step: dict,
    status: str,
    hosts: dict[str, dict],
    results: list[dict],
    decisions: list[dict],
    inventory_hosts: dict | None = None,
) -> StepView:
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
    for (st, reason), group in sorted(
        groups.items(), key=lambda kv: (STATUS_ORDER.index(kv[0][0]), kv[0][1])
    ):
        first = natural_hosts(set(group))[0]
        src = hosts[first].get("source", "")
        res = results[int(src[8:-1])] if src.startswith("results[") else {}
        lines, first_line = failing_excerpt(res, reason)
        evidence.append(
            Evidence(
                fold(group), st, reason, res.get("exit_status"), res.get("command", ""), lines, first_line
            )
        )
    mine = [d for d in decisions if d.get("step_id") == step.get("id")]
    targets = natural_hosts(set(step.get("targets") or hosts))
    return StepView(
        step.get("id", ""),
        step.get("title", ""),
        step.get("why", ""),
        status,
        ordered,
        evidence,
        mine,
        step_criteria(step, inventory_hosts or {}, targets),
    )


def build_view(doc: dict, log_name: str, log_sha256: str) -> ReportView:
    summary = doc.get("summary", {})
    verdicts = summary.get("verdicts", {})
    statuses = summary.get("step_status", {})
    phases: dict[str, PhaseView] = {}
    for step in doc.get("steps", []):
        view = _step_view(
            step,
            statuses.get(step.get("id"), "pending"),
            verdicts.get(step.get("id"), {}),
            doc.get("results", []),
            doc.get("decisions", []),
            (doc.get("inventory") or {}).get("hosts") or {},
        )
        phases.setdefault(step.get("phase", ""), PhaseView(step.get("phase", ""), [])).steps.append(view)
    hosts = natural_hosts({h for per_host in verdicts.values() for h in per_host})
    signer = doc.get("signer", {})
    verdict, code = overall(statuses, verdicts)
    appendix: list[tuple[str, str]] = []
    changes = final_changes(summary.get("changes", []), doc.get("results", []), verdicts, appendix)
    run = doc.get("run", {})
    scope = {
        "hosts": fold(hosts) if hosts else "",
        "host_count": len(hosts),
        "steps": len(doc.get("steps", [])),
        "phases": [p for p in phases],
        "runbook_sha256": run.get("runbook_sha256", ""),
        "inventory_sha256": run.get("inventory_sha256", ""),
    }
    phase_views = list(phases.values())
    return ReportView(
        site=doc.get("run", {}).get("site", ""),
        run=doc.get("run", {}),
        tool_version=doc.get("tool_version", ""),
        phases=phase_views,
        hosts=hosts,
        step_ids=[s.get("id", "") for s in doc.get("steps", [])],
        verdicts=verdicts,
        decisions=doc.get("decisions", []),
        open_pending=summary.get("open_pending_actions", []),
        changes=changes,
        host_keys=doc.get("host_keys", {}),
        signer=signer,
        log_name=log_name,
        log_sha256=log_sha256,
        verify_commands=verify_commands(signer, log_name),
        definition_changes=doc.get("definition_changes") or [],
        verdict=verdict,
        exit_code=code,
        open_items=open_items(phase_views, summary.get("open_pending_actions", [])),
        waivers=waivers(doc.get("decisions", [])),
        scope=scope,
        appendix=appendix,
        rail_pictures=rail_pictures(doc),
        kind_pictures=kind_pictures(
            doc.get("steps", []),
            (doc.get("journal") or {}).get("entries") or [],
            lambda step: step_criteria(
                step,
                (doc.get("inventory") or {}).get("hosts") or {},
                natural_hosts(set(step.get("targets") or verdicts.get(step.get("id"), {}))),
            ),
        ),
        topology_pictures=topology_pictures(doc),
    )


def definition_change_row(c: dict) -> list[str]:
    """When, what, during which step, from, to (short hashes, as `git log` shows them)."""
    what = "inventory" if c.get("kind") == "inventory" else "step definition"
    return [
        when(c.get("time")),
        what,
        str(c.get("step_id") or ""),
        str(c.get("from") or "")[:12],
        str(c.get("to") or "")[:12],
    ]


# --- the sign-off block, the changes' final status, criteria with values ----

FAILURE_WORDS = re.compile(
    r"fail|error|err\b|down|mismatch|wrong|missing|not found|disabled|polling|"
    r"degraded|invalid|timeout|timed out|refused|denied|no such|\bx\d+\b|warn",
    re.IGNORECASE,
)
_REASON_TOKEN = re.compile(r"[A-Za-z0-9_.:/\-]{3,}")
_COMMON = {
    "the",
    "and",
    "not",
    "expected",
    "found",
    "with",
    "for",
    "every",
    "from",
    "host",
    "this",
    "that",
    "are",
    "was",
    "has",
    "have",
    "port",
    "rail",
    "nic",
}
CONTEXT = 2
SHORT_BEFORE = 80  # a `before` value longer than this goes to the appendix


def failing_excerpt(result: dict, reason: str) -> tuple[list[str], int]:
    """The lines of the output that show the failure: those naming a value of the
    reason ("mlx5_2", "Polling", "x8") or a failure word, with CONTEXT lines around;
    the first lines when nothing matches. Returns (lines, first line number)."""
    text = result.get("stdout") or result.get("stderr") or ""
    lines = text.splitlines()
    tokens = {t.lower() for t in _REASON_TOKEN.findall(reason or "") if t.lower() not in _COMMON}
    hits = [
        i for i, ln in enumerate(lines) if any(t in ln.lower() for t in tokens) or FAILURE_WORDS.search(ln)
    ]
    if not hits:
        return excerpt(result), 1
    start = max(0, hits[0] - CONTEXT)
    end = min(len(lines), max(hits[0] + CONTEXT + 1, start + EXCERPT_LINES))
    cut = [printable(ln) for ln in lines[start:end]]
    rest = len(lines) - (end - start)
    if rest > 0:
        cut.append(f"… (lines {start + 1}-{end} of {len(lines)}; the whole output is in the log)")
    return cut, start + 1


def overall(statuses: dict[str, str], verdicts: dict[str, dict]) -> tuple[str, int]:
    """The rulebook's verdict of the run (rules.run_status) and its exit code."""
    step = rules.run_status(_status(v) for v in statuses.values()).value
    hosts = [_status(v.get("status", "")) for per in verdicts.values() for v in per.values()]
    return step, rules.exit_code(hosts)


def _status(value: str) -> Status:
    try:
        return Status(value)
    except ValueError:
        return Status.UNKNOWN


def open_items(phases: list[PhaseView], pending: list[dict]) -> list[str]:
    """What stands between this run and acceptance: each step not pass/skipped/waived,
    with its hosts, and each action still owed."""
    out = []
    done = {s.value for s in rules.SATISFIED}
    for phase in phases:
        for s in phase.steps:
            if s.status in done:
                continue
            where = "; ".join(f"{st} on {h}" for st, h in s.hosts_by_status.items() if st not in done)
            out.append(f"{s.id} ({s.title}): {where or s.status}")
    for p in pending:
        out.append(f"{p.get('action')} owed on {p.get('host')} (step {p.get('step_id')})")
    return out


def key_values(value: Any) -> str:
    """A `before` value as key=value pairs (one line), not as JSON."""
    if value is None:
        return ""
    if isinstance(value, dict):
        return " ".join(f"{k}={_scalar(v)}" for k, v in sorted(value.items()))
    return _scalar(value)


def _scalar(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return compact(value)
    text = "" if value is None else str(value)
    return shlex.quote(text) if (not text or any(c.isspace() for c in text)) else text


def final_changes(
    changes: list[dict], results: list[dict], verdicts: dict[str, dict], appendix: list[tuple[str, str]]
) -> list[dict]:
    """Each applied change with what became of it: an apply followed by a passing
    verify reads "applied; re-verify passed", not the apply's own "pending"."""
    out = []
    for c in changes:
        i, sid, host = c.get("result"), c.get("step_id"), c.get("host")
        # The store keeps the latest result of each (step, action, host): what came
        # after this change is told by time, not by position.
        mine = results[i] if isinstance(i, int) and 0 <= i < len(results) else {}
        since = _time(mine.get("started"))
        later = [
            r
            for j, r in enumerate(results)
            if j != i
            and r.get("step_id") == sid
            and r.get("host") == host
            and since is not None
            and (_time(r.get("started")) or 0) > since
        ]
        verify = next((r for r in reversed(later) if r.get("action") == "verify"), None)
        undone = any(r.get("action") == "rollback" and r.get("status") == "rolled_back" for r in later)
        status = c.get("status", "")
        if c.get("action") == "rollback":
            final = "rolled back" if status == "rolled_back" else f"rollback {status}"
        elif status not in ("pending", "pass"):
            final = f"apply {status}"
        elif undone:
            final = "applied, then rolled back"
        elif verify is None:
            final = "applied; not re-verified"
        else:
            final = (
                f"applied; re-verify {'passed' if verify.get('status') == 'pass' else verify.get('status')}"
            )
        now = verdicts.get(sid, {}).get(host, {}).get("status", "")
        before = key_values(c.get("before"))
        if len(before) > SHORT_BEFORE:
            appendix.append((f"{sid} on {host}", before))
            before = f"{before[: SHORT_BEFORE - 20]} … (appendix A{len(appendix)})"
        out.append({**c, "final": final, "now": now, "before_text": before})
    return out


def _time(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def waivers(decisions: list[dict]) -> list[dict]:
    return [d for d in decisions if d.get("kind") == "waive"]


def step_criteria(step: dict, inventory_hosts: dict, hosts: list[str]) -> list[str]:
    """The verify criteria with the first targeted host's values filled in."""
    definition = step.get("definition") or {}
    verify = definition.get("verify") or {}
    variables = _criteria_vars(definition, inventory_hosts, hosts)
    out = []
    for raw in verify.get("expect") or []:
        check, problems = parse_check(raw, 0)
        if check is not None:
            out.append(describe(check, variables))
    return out or (["exit status == 0"] if verify else [])


def _criteria_vars(definition: dict, inventory_hosts: dict, hosts: list[str]) -> dict | None:
    """The first host's inventory vars, with what the engine adds at run time:
    its own name, and for a `launch:` step the job over every targeted host
    (as runbook/engine/kinds/launch.py fills them for the whole job)."""
    if not hosts or not isinstance(inventory_hosts.get(hosts[0]), dict):
        return None
    host = hosts[0]
    variables = {"inventory_hostname": host, "inventory_hostname_short": host.split(".")[0]}
    variables.update(inventory_hosts[host])
    if definition.get("launch") is not None:
        variables.update(launch_variables(hosts, lambda h: inventory_hosts.get(h) or {}))
    return variables


def decision_text(d: dict) -> str:
    """What a decision says; an approval names the commands as they ran (its
    `commands`), not the step's template its journal reason quotes."""
    if d.get("kind") == "approve" and d.get("commands") is not None:
        return str(d.get("reason", "")).split(":", 1)[0]
    return str(d.get("reason", ""))
