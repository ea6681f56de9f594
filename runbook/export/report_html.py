"""The completion report as one self-contained HTML file: inline CSS and SVG,
no script, no external asset, print styles for A4. Everything that came from a
host or a person goes through `e()` (html.escape with quotes)."""

from __future__ import annotations

from html import escape

from .matrix_svg import FILL, render_legend, render_matrix_svg
from .pair_svg import pair_legend, render_launch_svg, render_pair_svg
from .pair_view import PairPicture
from .rail_svg import render_rail_svg
from .report_data import (
    GLYPH,
    STATUS_ORDER,
    Evidence,
    ReportView,
    StepView,
    decision_text,
    definition_change_row,
    exit_text,
    when,
)
from .topology_svg import render_topology_svg

CSS = """
body { font: 14px/1.45 "DejaVu Sans", Arial, sans-serif; color: #111; margin: 2em auto;
       max-width: 1100px; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: .2em; }
h2 { border-bottom: 1px solid #bbb; margin-top: 1.6em; }
h3 { margin-top: 1.2em; } .meta td { padding: 1px 1em 1px 0; }
table.grid { border-collapse: collapse; margin: .5em 0; }
table.grid th, table.grid td { border: 1px solid #bbb; padding: 2px 6px; text-align: left;
       vertical-align: top; }
table.grid td.n { text-align: right; }
.step { border: 1px solid #ccc; border-left-width: 6px; padding: .4em .8em; margin: .6em 0;
        page-break-inside: avoid; break-inside: avoid; }
.step h4 { margin: .1em 0 .3em; font-size: 1.05em; }
.badge { display: inline-block; min-width: 1.4em; text-align: center; border: 1px solid #777;
         border-radius: 3px; padding: 0 .3em; font-weight: bold; }
.why { color: #444; font-style: italic; margin: .2em 0; }
.nodeset, code { font-family: "DejaVu Sans Mono", monospace; font-size: .95em; }
pre { background: #f6f6f6; border: 1px solid #ddd; padding: .4em; white-space: pre-wrap;
      word-break: break-all; font-size: 12px; margin: .3em 0; }
.legend .key { margin-right: 1em; white-space: nowrap; }
.swatch { display: inline-block; width: 1.4em; text-align: center; border: 1px solid #999; }
.matrix-wrap { overflow-x: auto; }
.topo-wrap { display: flex; flex-wrap: wrap; gap: 8px 16px; }
.topo { break-inside: avoid; page-break-inside: avoid; }
.note { color: #444; }
@media print {
  body { margin: 0; max-width: none; font-size: 11px; }
  h2 { page-break-after: avoid; break-after: avoid; }
  .matrix-wrap { overflow: visible; }
  svg.matrix, svg.rails, svg.pairs, svg.launch { max-width: 100%; height: auto; }
  a { color: inherit; text-decoration: none; }
}
@page { size: A4; margin: 14mm; }
"""


def e(value: object) -> str:
    return escape("" if value is None else str(value), quote=True)


def render_html(view: ReportView) -> str:
    run = view.run
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Completion report — {e(view.site)} — {e(run.get('run_id'))}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>Completion report — {e(view.site)}</h1>",
        _sign_off(view),
        _meta(view),
        _phase_summary(view),
        "<h2>Hosts × steps</h2>",
        render_legend(),
        f'<div class="matrix-wrap">{render_matrix_svg(view)}</div>',
        _rails(view),
        _kinds(view),
        _topology(view),
        "<h2>Steps</h2>",
    ]
    for phase in view.phases:
        parts.append(f"<h3>Phase {e(phase.name)}</h3>")
        parts += [_step(s) for s in phase.steps]
    parts += [
        _decisions(view),
        _changes(view),
        _definition_changes(view),
        _pending(view),
        _host_keys(view),
        _signature(view),
        _appendix(view),
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _sign_off(view: ReportView) -> str:
    """The verdict and the sign-off block, first on the page (report_md.py has the same)."""
    sc, s = view.scope, view.signer
    colour = FILL.get(view.verdict, "#fff")
    items = "".join(f"<li>{e(i)}</li>" for i in view.open_items)
    waived = "".join(
        f"<li><code>{e(w.get('step_id'))}</code> on {e(w.get('hosts') or 'whole step')} by "
        f"{e(w.get('operator'))}: {e(w.get('reason'))} (expires {e(when(w.get('expires')) or 'never')})</li>"
        for w in view.waivers
    )
    rows = [
        ("Site", e(view.site)),
        (
            "Scope",
            f'{sc.get("host_count", 0)} hosts <span class="nodeset">{e(sc.get("hosts"))}</span>, '
            f"{sc.get('steps', 0)} steps in {len(sc.get('phases', []))} phases; runbook SHA-256 "
            f"<code>{e(sc.get('runbook_sha256'))}</code>, inventory SHA-256 "
            f"<code>{e(sc.get('inventory_sha256'))}</code>",
        ),
        ("Verdict", f"<strong>{e(view.verdict.upper())}</strong> (exit code {view.exit_code})"),
        ("Open items", f"<ul>{items}</ul>" if items else "none"),
        ("Waivers", f"<ul>{waived}</ul>" if waived else "none"),
        (
            "Signer",
            f"{e(s.get('identity'))}, {e(s.get('key_type'))} key <code>{e(s.get('fingerprint'))}</code>",
        ),
        (
            "Verify",
            "get the signer's public key from the signer (not from this report), make an "
            "allowed_signers file from it and run the commands under Signature, below",
        ),
    ]
    return (
        f'<p class="verdict" style="border-left:8px solid {colour};padding-left:8px">'
        f"<strong>Overall verdict: {e(view.verdict.upper())}</strong></p>"
        '<h2 id="sign-off">Sign-off</h2><table class="meta signoff">'
        + "".join(f"<tr><td>{e(k)}</td><td>{v}</td></tr>" for k, v in rows)
        + "</table>"
    )


def _rails(view: ReportView) -> str:
    out = []
    for pic in view.rail_pictures:
        out.append(
            f"<h2>Rail cabling (<code>{e(pic.step_id)}</code>)</h2>"
            "<p>Each host's IB ports and the leaf:port each one reaches; under each port, the leaf "
            "most hosts reach on it. ✗ marks a link the verdict names as wrong, with the designed "
            "leaf after ≠; ▼ a link a link-health step (pair bandwidth, BER, port counters) names "
            "slow or erroring.</p>"
        )
        out.append(f'<div class="matrix-wrap">{render_rail_svg(pic)}</div>')
        slow = [
            f"{host} {dev} ({', '.join(link.slow)})"
            for host, row in pic.rows.items()
            for dev, link in row.items()
            if link.slow
        ]
        if slow:
            out.append(f"<p>Slow or erroring links: {e('; '.join(slow))}</p>")
        if pic.unreadable:
            out.append(f"<p>Output not readable on: {e(', '.join(pic.unreadable))}</p>")
    return "".join(out)


def _kinds(view: ReportView) -> str:
    out = []
    for pic in view.kind_pictures:
        shown = pic.criteria if isinstance(pic, PairPicture) else pic.criteria[:1]  # the threshold
        crit = f"<p>Pass when: {e('; '.join(shown))}</p>" if shown else ""
        if isinstance(pic, PairPicture):
            out.append(
                f"<h2>Pair results (<code>{e(pic.step_id)}</code>)</h2>"
                f"<p>{e(pic.title)}. Each host's NIC on each rail with every test it was in: the "
                f"partner and the measured {e(pic.unit)} (2nd: the tie-break with another partner).</p>"
                + crit
                + pair_legend()
                + f'<div class="matrix-wrap">{render_pair_svg(pic)}</div>'
                + '<p class="named">Slow links named: '
                + (
                    "; ".join(
                        f'rail {e(r)} {e(d)}: <span class="nodeset">{e(h)}</span>'
                        for r, d, h in pic.named_links
                    )
                    or "none"
                )
                + '. Slow hosts named: <span class="nodeset">'
                + (e(pic.named_hosts) or "none")
                + "</span>.</p>"
            )
        else:
            out.append(
                f"<h2>Job split (<code>{e(pic.step_id)}</code>)</h2>"
                f"<p>{e(pic.title)}. One job over all {pic.hosts} hosts, then halves of the failing "
                "groups until the slow hosts are named (✓ at the threshold, ✗ below it).</p>"
                + crit
                + f'<div class="matrix-wrap">{render_launch_svg(pic)}</div>'
                + '<p class="named">Slow hosts named: <span class="nodeset">'
                + (e(pic.slow) or "none")
                + "</span>"
                + (f'; not settled: <span class="nodeset">{e(pic.unknown)}</span>' if pic.unknown else "")
                + ".</p>"
            )
    return "".join(out)


def _topology(view: ReportView) -> str:
    out = []
    for pic in view.topology_pictures:
        out.append(
            f"<h2>GPU↔NIC topology (<code>{e(pic.step_id)}</code>)</h2>"
            "<p>Each rail NIC against each GPU as <code>nvidia-smi topo -m</code> printed it. ✗ marks a "
            "cell the verdict names as not designed; each GPU's nearest rail NIC is bold on green; ≠ "
            "after a GPU: its nearest NIC is not the one most hosts have nearest. Drawn: the hosts that "
            "deviate, and one that does not.</p>"
        )
        out.append(
            '<div class="topo-wrap">'
            + "".join(
                f'<div class="topo">{render_topology_svg(n, pic.fleet_nearest)}</div>' for n in pic.shown
            )
            + "</div>"
        )
        if pic.as_designed:
            out.append(f'<p>As designed: <span class="nodeset">{e(pic.as_designed)}</span>.</p>')
        if pic.not_shown:
            out.append(f'<p>Also deviating (not drawn): <span class="nodeset">{e(pic.not_shown)}</span>.</p>')
        if pic.unreadable:
            out.append(f"<p>Output not readable on: {e(', '.join(pic.unreadable))}</p>")
    return "".join(out)


def _appendix(view: ReportView) -> str:
    if not view.appendix:
        return ""
    return "<h2>Appendix: long values before the changes</h2>" + "".join(
        f"<p>A{i}. {e(label)}</p><pre>{e(value)}</pre>" for i, (label, value) in enumerate(view.appendix, 1)
    )


def _meta(view: ReportView) -> str:
    run = view.run
    rows = [
        ("Run", run.get("run_id")),
        ("Operator(s)", ", ".join(run.get("operators") or [run.get("operator", "")])),
        ("Started", when(run.get("started"))),
        ("Ended", when(run.get("ended")) or "not ended"),
        ("Tool", f"runbook {view.tool_version}"),
        ("Log", f"{view.log_name} (SHA-256 {view.log_sha256})"),
        ("Signature", f"{view.log_name}.sig"),
    ]
    return (
        '<table class="meta">'
        + "".join(f"<tr><td>{e(k)}</td><td>{e(v)}</td></tr>" for k, v in rows)
        + "</table>"
    )


def _phase_summary(view: ReportView) -> str:
    head = "".join(f"<th>{e(GLYPH[s])} {e(s.replace('_', ' '))}</th>" for s in STATUS_ORDER)
    rows = []
    for phase in view.phases:
        c = phase.counts()
        rows.append(
            f"<tr><td>{e(phase.name)}</td><td class=n>{len(phase.steps)}</td>"
            + "".join(f"<td class=n>{c.get(s, '')}</td>" for s in STATUS_ORDER)
            + "</tr>"
        )
    return (
        '<h2>Summary per phase</h2><table class="grid"><tr><th>Phase</th><th>Steps</th>'
        f"{head}</tr>{''.join(rows)}</table>"
    )


def _step(step: StepView) -> str:
    colour = FILL.get(step.status, "#fff")
    out = [
        f'<div class="step" style="border-left-color:{colour}">',
        f'<h4><span class="badge" style="background:{colour}">{e(GLYPH.get(step.status, ""))}'
        f"</span> <code>{e(step.id)}</code> — {e(step.title)}: "
        f"<strong>{e(step.status.upper())}</strong></h4>",
    ]
    if step.why:
        out.append(f'<p class="why">{e(step.why)}</p>')
    if step.criteria:
        out.append("<p>Pass when: " + "; ".join(e(c) for c in step.criteria) + "</p>")
    if step.hosts_by_status:
        out.append(
            "<ul>"
            + "".join(
                f'<li>{e(s.replace("_", " "))}: <span class="nodeset">{e(h)}</span></li>'
                for s, h in step.hosts_by_status.items()
            )
            + "</ul>"
        )
    out += [_evidence(ev) for ev in step.evidence]
    for d in step.decisions:
        out.append(
            f'<p class="note">{e(d.get("kind"))} <span class="nodeset">'
            f"{e(d.get('hosts') or 'whole step')}</span> by {e(d.get('operator'))} at "
            f"{e(when(d.get('time')))}: {e(decision_text(d))}</p>"
        )
        for c in d.get("commands") or []:
            out.append(
                f'<p class="note">ran on <span class="nodeset">{e(c.get("hosts"))}</span>: '
                f"<code>{e(c.get('command'))}</code></p>"
            )
    out.append("</div>")
    return "".join(out)


def _evidence(ev: Evidence) -> str:
    out = [
        f'<p><strong>{e(ev.status)}</strong> on <span class="nodeset">{e(ev.hosts)}</span>: '
        f"{e(ev.reason) or '(no reason given)'}"
    ]
    if ev.command:
        out.append(f"<br>command <code>{e(ev.command)}</code>, exit status {e(exit_text(ev.exit_status))}")
    out.append("</p>")
    if ev.excerpt:
        out.append(f"<p>output from line {ev.first_line}:</p><pre>" + e("\n".join(ev.excerpt)) + "</pre>")
    return "".join(out)


def _table(title: str, header: list[str], rows: list[list[object]]) -> str:
    if not rows:
        return ""
    head = "".join(f"<th>{e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<h2>{e(title)}</h2><table class="grid"><tr>{head}</tr>{body}</table>'


def _decisions(view: ReportView) -> str:
    return _table(
        "Waivers, skips and notes",
        ["Kind", "Step", "Hosts", "Who", "When", "Why", "Expires"],
        [
            [
                d.get("kind"),
                d.get("step_id"),
                d.get("hosts") or "whole step",
                d.get("operator"),
                when(d.get("time")),
                decision_text(d),
                when(d.get("expires")),
            ]
            for d in view.decisions
        ],
    )


def _changes(view: ReportView) -> str:
    return _table(
        "Changes applied and rolled back",
        ["Step", "Host", "Action", "Final status", "Host now", "Before"],
        [
            [
                c.get("step_id"),
                c.get("host"),
                c.get("action"),
                c.get("final"),
                c.get("now"),
                c.get("before_text"),
            ]
            for c in view.changes
        ],
    )


def _definition_changes(view: ReportView) -> str:
    return _table(
        "Definitions changed during the run",
        ["First used", "What", "During step", "From", "To"],
        [definition_change_row(c) for c in view.definition_changes],
    )


def _pending(view: ReportView) -> str:
    return _table(
        "Pending actions still open",
        ["Action", "Host", "Step", "Since"],
        [[p.get("action"), p.get("host"), p.get("step_id"), when(p.get("since"))] for p in view.open_pending],
    )


def _host_keys(view: ReportView) -> str:
    return _table(
        "Host keys",
        ["Host", "Fingerprint", "How", "When"],
        [
            [h, k.get("fingerprint"), k.get("how"), when(k.get("time"))]
            for h, k in sorted(view.host_keys.items())
        ],
    )


def _signature(view: ReportView) -> str:
    s = view.signer
    return (
        '<h2 id="signature">Signature</h2>'
        f"<p>Signed by <strong>{e(s.get('identity'))}</strong> with {e(s.get('key_type'))} "
        f"key <code>{e(s.get('fingerprint'))}</code> (SSHSIG, namespace <code>runbook</code>)."
        "</p><p>The signature proves the log is unchanged since it was signed, by the holder "
        "of that key. It does not prove that the commands really ran on the hosts.</p>"
        "<p>To verify, get the signer's public key from them directly and check its "
        "fingerprint with them; never take the key from this log "
        "(whoever forges a log puts their own key in it):</p>"
        f"<pre>{e(chr(10).join(view.verify_commands))}</pre>"
    )
