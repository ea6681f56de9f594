"""The completion report as Markdown. Every text that came from a host or a
person is escaped (inline) or fenced (outputs), so it cannot change the layout
or smuggle HTML into a renderer."""

from __future__ import annotations

import re

from .pair_view import GLYPH as PAIR_GLYPH
from .pair_view import MEANING, PairPicture
from .rail_svg import cell_text
from .report_data import (
    GLYPH,
    STATUS_ORDER,
    ReportView,
    StepView,
    decision_text,
    definition_change_row,
    exit_text,
    when,
)
from .topology_svg import cell_text as topo_cell

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#~!&])")


def md(text: object) -> str:
    """Inline text: Markdown punctuation backslash-escaped, one line."""
    flat = " ".join(str(text if text is not None else "").split())
    return _MD_SPECIAL.sub(r"\\\1", flat)


def fenced(lines: list[str], lang: str = "text") -> list[str]:
    """A code block whose fence is longer than any backtick run inside it."""
    body = "\n".join(lines)
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + lang, *lines, fence]


def _code(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}" if text else ""


def render_markdown(view: ReportView) -> str:
    run = view.run
    out = [f"# Completion report — {md(view.site)}", ""]
    out += _sign_off(view)
    out += ["## Run", ""]
    out += [
        f"- Run: {md(run.get('run_id'))}",
        f"- Operator(s): {md(', '.join(run.get('operators') or [run.get('operator', '')]))}",
        f"- Started: {when(run.get('started'))}; ended: {when(run.get('ended')) or 'not ended'}",
        f"- Tool: runbook {md(view.tool_version)}",
        f"- Log: {md(view.log_name)} (SHA-256 {view.log_sha256}), signature {md(view.log_name)}.sig",
        "",
    ]
    out += _phase_summary(view)
    out += _matrix(view) + _rails(view) + _kinds(view) + _topology(view)
    out += ["## Steps", ""]
    for phase in view.phases:
        out += [f"### Phase {md(phase.name)}", ""]
        for step in phase.steps:
            out += _step(step)
    out += _decisions(view) + _changes(view) + _definition_changes(view) + _pending(view) + _host_keys(view)
    out += _signature(view) + _appendix(view)
    return "\n".join(out).rstrip() + "\n"


def _sign_off(view: ReportView) -> list[str]:
    """The first thing the customer reads: the verdict, what it covers, what is
    still open or waived, who signed and how to check the signature."""
    sc, s = view.scope, view.signer
    out = [
        f"**Overall verdict: {view.verdict.upper()}** (exit code {view.exit_code})",
        "",
        "## Sign-off",
        "",
        f"- Site: {md(view.site)}",
        f"- Scope: {sc.get('host_count', 0)} hosts {_code(sc.get('hosts', ''))}, "
        f"{sc.get('steps', 0)} steps in {len(sc.get('phases', []))} phases; runbook SHA-256 "
        f"{md(sc.get('runbook_sha256'))}, inventory SHA-256 {md(sc.get('inventory_sha256'))}",
        f"- Verdict: **{view.verdict.upper()}**",
    ]
    out.append(f"- Open items: {len(view.open_items) or 'none'}")
    out += [f"  - {md(item)}" for item in view.open_items]
    out.append(f"- Waivers: {len(view.waivers) or 'none'}")
    out += [
        f"  - {md(w.get('step_id'))} on {md(w.get('hosts') or 'whole step')} by {md(w.get('operator'))}: "
        f"{md(w.get('reason'))} (expires {when(w.get('expires')) or 'never'})"
        for w in view.waivers
    ]
    out += [
        f"- Signer: {md(s.get('identity'))}, {md(s.get('key_type'))} key {md(s.get('fingerprint'))}",
        "- Verify: get the signer's public key from the signer (not from this report), make an "
        "allowed_signers file from it and run the commands under [Signature](#signature).",
        "",
    ]
    return out


def _appendix(view: ReportView) -> list[str]:
    if not view.appendix:
        return []
    out = ["", "## Appendix: long values before the changes", ""]
    for i, (label, value) in enumerate(view.appendix, 1):
        out += [f"A{i}. {md(label)}", ""] + fenced([value]) + [""]
    return out


def _phase_summary(view: ReportView) -> list[str]:
    out = [
        "## Summary per phase",
        "",
        "| Phase | Steps | " + " | ".join(s for s in STATUS_ORDER) + " |",
        "|---|---:|" + "---:|" * len(STATUS_ORDER),
    ]
    for phase in view.phases:
        c = phase.counts()
        out.append(
            f"| {md(phase.name)} | {len(phase.steps)} | "
            + " | ".join(str(c.get(s, "")) for s in STATUS_ORDER)
            + " |"
        )
    return out + [""]


def _matrix(view: ReportView) -> list[str]:
    if not view.hosts:
        return []
    out = [
        "## Hosts × steps",
        "",
        "Legend: " + ", ".join(f"{g} {s}" for s, g in GLYPH.items()) + "; blank: no result for this host.",
        "",
    ]
    out += [f"{i}. {md(sid)}" for i, sid in enumerate(view.step_ids, 1)] + [""]
    out.append("| Host | " + " | ".join(str(i) for i in range(1, len(view.step_ids) + 1)) + " |")
    out.append("|---|" + ":-:|" * len(view.step_ids))
    for host in view.hosts:
        cells = [
            GLYPH.get(view.verdicts.get(sid, {}).get(host, {}).get("status", ""), " ")
            if host in view.verdicts.get(sid, {})
            else " "
            for sid in view.step_ids
        ]
        out.append(f"| {md(host)} | " + " | ".join(cells) + " |")
    return out + [""]


def _rails(view: ReportView) -> list[str]:
    out = []
    for pic in view.rail_pictures:
        out += [
            f"## Rail cabling ({md(pic.step_id)})",
            "",
            "Leaf:port each port reaches; ✗ marks a link the verdict names as wrong (≠ the designed leaf); "
            "▼ a link a link-health step names slow or erroring.",
            "",
            "| Host | " + " | ".join(f"{md(d)} → {md(pic.rail_leaf(d) or '?')}" for d in pic.devices) + " |",
            "|---|" + "---|" * len(pic.devices),
        ]
        for host, row in pic.rows.items():
            out.append(
                f"| {md(host)} | "
                + " | ".join(md(cell_text(row[d])) if d in row else " " for d in pic.devices)
                + " |"
            )
        slow = [
            f"{host} {dev} ({', '.join(link.slow)})"
            for host, row in pic.rows.items()
            for dev, link in row.items()
            if link.slow
        ]
        if slow:
            out.append(f"\nSlow or erroring links: {md('; '.join(slow))}")
        if pic.unreadable:
            out.append(f"\nOutput not readable on: {md(', '.join(pic.unreadable))}")
        out.append("")
    return out


def _kinds(view: ReportView) -> list[str]:
    """The text version of the pair and job-split pictures."""
    out: list[str] = []
    for pic in view.kind_pictures:
        shown = pic.criteria if isinstance(pic, PairPicture) else pic.criteria[:1]  # the threshold
        crit = [f"Pass when: {md('; '.join(shown))}", ""] if shown else []
        if isinstance(pic, PairPicture):
            legend = ", ".join(
                f"{PAIR_GLYPH[m]} {MEANING[m]}" for m in ("pass", "named", "slow", "cleared", "unknown")
            )
            out += [
                f"## Pair results ({md(pic.step_id)})",
                "",
                f"Partner and measured {md(pic.unit)} per host and rail; {md(legend)}.",
                "",
            ]
            out += crit
            out.append("| Host | " + " | ".join(f"rail {md(r)}" for r in pic.rails) + " |")
            out.append("|---|" + "---|" * len(pic.rails))
            for host in pic.hosts:
                row = pic.cells.get(host, {})
                cells = [md(f"{row[r].dev} {row[r].text()}") if r in row else " " for r in pic.rails]
                out.append(f"| {md(host)} | " + " | ".join(cells) + " |")
            links = "; ".join(f"rail {r} {d}: {h}" for r, d, h in pic.named_links) or "none"
            out += [
                "",
                f"Slow links named: {_code(links)}. Slow hosts named: {_code(pic.named_hosts or 'none')}.",
                "",
            ]
        else:
            out += [
                f"## Job split ({md(pic.step_id)})",
                "",
                f"One job over all {pic.hosts} hosts, then halves of the failing groups (✓ at the threshold, ✗ below).",
                "",
            ]
            out += crit
            for i, jobs in enumerate(pic.rounds, 1):
                glyphs = {"pass": "✓", "fail": "✗"}
                out.append(
                    f"- round {i}: " + ", ".join(f"{glyphs.get(st, '?')} {_code(h)}" for h, st in jobs)
                )
            unsettled = f"; not settled: {_code(pic.unknown)}" if pic.unknown else ""
            out += ["", f"Slow hosts named: {_code(pic.slow or 'none')}{unsettled}.", ""]
    return out


def _topology(view: ReportView) -> list[str]:
    """The text version of the GPU↔NIC topology grids."""
    out: list[str] = []
    for pic in view.topology_pictures:
        out += [
            f"## GPU↔NIC topology ({md(pic.step_id)})",
            "",
            "nvidia-smi topo -m, rail NICs × GPUs; ✗ a cell the verdict names as not designed; "
            "\\* a GPU's nearest rail NIC; ≠ after a GPU: its nearest NIC is not the one most hosts have. "
            "Drawn: the hosts that deviate, and one that does not.",
            "",
        ]
        for n in pic.shown:
            out += [
                f"**{md(n.host)}**: {md(n.status)}{' — deviates' if n.deviates else ' — as designed'}",
                "",
            ]
            out.append("| NIC | " + " | ".join(md(g + ("≠" if g in n.off else "")) for g in n.gpus) + " |")
            out.append("|---|" + ":-:|" * len(n.gpus))
            for dev in n.nics:
                cells = [
                    md(topo_cell(n, dev, g) + ("*" if dev in n.nearest.get(g, []) else "")) for g in n.gpus
                ]
                out.append(f"| {md(dev)} | " + " | ".join(cells) + " |")
            out.append("")
        if pic.as_designed:
            out += [f"As designed: {_code(pic.as_designed)}.", ""]
        if pic.not_shown:
            out += [f"Also deviating (not drawn): {_code(pic.not_shown)}.", ""]
        if pic.unreadable:
            out += [f"Output not readable on: {md(', '.join(pic.unreadable))}", ""]
    return out


def _step(step: StepView) -> list[str]:
    out = [
        f"#### {GLYPH.get(step.status, '')} {md(step.id)} — {md(step.title)}: **{step.status.upper()}**",
        "",
    ]
    if step.why:
        out += [f"> {md(step.why)}", ""]
    if step.criteria:
        out += ["Pass when: " + "; ".join(md(c) for c in step.criteria), ""]
    for status, hosts in step.hosts_by_status.items():
        out.append(f"- {status}: {_code(hosts)}")
    for ev in step.evidence:
        out += ["", f"**{ev.status}** on {_code(ev.hosts)}: {md(ev.reason) or '(no reason given)'}"]
        if ev.command:
            out.append(f"command {_code(ev.command)}, exit status {md(exit_text(ev.exit_status))}")
        if ev.excerpt:
            out += ["", f"output from line {ev.first_line}:"] + fenced(ev.excerpt)
    for d in step.decisions:
        out.append(
            f"- {md(d.get('kind'))} {_code(d.get('hosts') or 'whole step')} by "
            f"{md(d.get('operator'))} at {when(d.get('time'))}: {md(decision_text(d))}"
        )
        for c in d.get("commands") or []:
            out.append(
                f"  - ran on {_code(c.get('hosts', ''))}: {_code(' '.join(str(c.get('command', '')).split()))}"
            )
    return out + [""]


def _decisions(view: ReportView) -> list[str]:
    if not view.decisions:
        return []
    out = [
        "## Waivers, skips and notes",
        "",
        "| Kind | Step | Hosts | Who | When | Why | Expires |",
        "|---|---|---|---|---|---|---|",
    ]
    for d in view.decisions:
        out.append(
            f"| {md(d.get('kind'))} | {md(d.get('step_id'))} | "
            f"{md(d.get('hosts') or 'whole step')} | {md(d.get('operator'))} | "
            f"{when(d.get('time'))} | {md(decision_text(d))} | {when(d.get('expires'))} |"
        )
    return out + [""]


def _changes(view: ReportView) -> list[str]:
    if not view.changes:
        return []
    out = [
        "## Changes applied and rolled back",
        "",
        "| Step | Host | Action | Final status | Host now | Before |",
        "|---|---|---|---|---|---|",
    ]
    for c in view.changes:
        out.append(
            f"| {md(c.get('step_id'))} | {md(c.get('host'))} | {md(c.get('action'))} | "
            f"{md(c.get('final'))} | {md(c.get('now'))} | {md(c.get('before_text'))} |"
        )
    return out + [""]


def _definition_changes(view: ReportView) -> list[str]:
    if not view.definition_changes:
        return []
    out = [
        "## Definitions changed during the run",
        "",
        "Results name the version that judged them (`results[].step_sha256`, `inventory_sha256` in the log).",
        "",
        "| First used | What | During step | From | To |",
        "|---|---|---|---|---|",
    ]
    for c in view.definition_changes:
        out.append("| " + " | ".join(md(x) for x in definition_change_row(c)) + " |")
    return out + [""]


def _pending(view: ReportView) -> list[str]:
    if not view.open_pending:
        return []
    out = ["## Pending actions still open", ""]
    for p in view.open_pending:
        out.append(
            f"- {md(p.get('action'))} owed on {md(p.get('host'))} "
            f"(step {md(p.get('step_id'))}, since {when(p.get('since'))})"
        )
    return out + [""]


def _host_keys(view: ReportView) -> list[str]:
    if not view.host_keys:
        return []
    out = ["## Host keys", "", "| Host | Fingerprint | How |", "|---|---|---|"]
    for host in sorted(view.host_keys):
        k = view.host_keys[host]
        out.append(f"| {md(host)} | {md(k.get('fingerprint'))} | {md(k.get('how'))} |")
    return out + [""]


def _signature(view: ReportView) -> list[str]:
    s = view.signer
    return [
        "## Signature",
        "",
        f"Signed by {md(s.get('identity'))} with {md(s.get('key_type'))} key "
        f"{md(s.get('fingerprint'))} (SSHSIG, namespace `runbook`).",
        "",
        "The signature proves the log is unchanged since it was signed, by the holder of "
        "that key. It does not prove that the commands really ran on the hosts.",
        "",
        "To verify, get the signer's public key from them directly and check its "
        "fingerprint with them; never take the key from this log "
        "(whoever forges a log puts their own key in it):",
        "",
    ] + fenced(view.verify_commands, "sh")
