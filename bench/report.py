"""Results JSON -> the Markdown page (bench/results/latest.md).

python bench/report.py bench/results/latest.json > page.md
"""

from __future__ import annotations

import json
import sys

import step_breakdown

TARGET_COLD, TARGET_WARM = 1.2, 1.3


def f(x, nd=2) -> str:
    return "-" if x is None or x != x else f"{x:.{nd}f}"


def targets(res: dict) -> list[dict]:
    """Each target of the issue: met, missed, or not measured."""
    out = []
    for n, block in sorted(res.get("fanout", {}).items(), key=lambda kv: int(kv[0])):
        rows = {r["client"]: r for r in block.get("rows", [])}
        for client, limit in (("runbook-cold", TARGET_COLD), ("runbook-warm", TARGET_WARM)):
            r = rows.get(client)
            ok = r is not None and r["ok_min"] == r["hosts"] and r["wall_ratio"] is not None
            out.append(
                {
                    "what": f"{client} wall within {limit}x of raw asyncssh, N={n}",
                    "value": f(r["wall_ratio"]) + "x" if ok else "not measured",
                    "met": (r["wall_ratio"] <= limit) if ok else None,
                }
            )
        cold = rows.get("runbook-cold")
        for other in ("clush", "pdsh", "ansible"):
            o = rows.get(other)
            if cold and o and cold["ok_min"] == cold["hosts"]:
                out.append(
                    {
                        "what": f"runbook-cold ahead of {other}, N={n}",
                        "value": f"{f(cold['wall'])}s vs {f(o['wall'])}s",
                        "met": cold["wall"] < o["wall"],
                    }
                )
    return out


def fanout_md(res: dict) -> list[str]:
    blocks = res.get("fanout", {})
    if not blocks:
        return []
    ns = sorted(blocks, key=int)
    any_block = blocks[ns[0]]
    L = [
        "## 1. Fan-out of one verify step",
        "",
        f"Step `{any_block.get('step')}` (`{any_block.get('command', '')}`; its parser and criteria "
        "included for runbook). Cell: **median wall s (ratio) / median CPU s (ratio)**. Cold rows: "
        "the whole client process, CPU = process + children (from wait4), start-up included; ratio "
        "to `raw-asyncssh-cold` of the same repetition. Warm rows: the timed step on open "
        "connections, in-process CPU; ratio to `raw-asyncssh-warm` of the same repetition. "
        "Medians of the per-repetition ratios.",
        "",
        "| client | "
        + " | ".join(
            f"N={n} ({blocks[n]['rows'][0]['hosts']} hosts)" if blocks[n].get("rows") else f"N={n}"
            for n in ns
        )
        + " |",
        "|---|" + "---|" * len(ns),
    ]
    clients = []
    for n in ns:
        for r in blocks[n].get("rows", []):
            if r["client"] not in clients:
                clients.append(r["client"])
    for c in clients:
        cells = []
        for n in ns:
            r = next((r for r in blocks[n].get("rows", []) if r["client"] == c), None)
            if r is None:
                cells.append("")
                continue
            bad = "" if r["ok_min"] == r["hosts"] else f" **ok {r['ok_min']}/{r['hosts']}**"
            reps = "" if r["reps"] > 1 else " [1x]"
            cells.append(
                f"{f(r['wall'], 3 if r['wall'] < 1 else 2)} ({f(r['wall_ratio'])}) / "
                f"{f(r['cpu'], 3 if r['cpu'] < 1 else 2)} ({f(r['cpu_ratio'])}){reps}{bad}"
            )
        L.append(f"| {c} | " + " | ".join(cells) + " |")
    L += [
        "",
        "Server (sim) CPU per run, median s: "
        + "; ".join(
            f"N={n}: " + ", ".join(f"{r['client']} {f(r['server_cpu'])}" for r in blocks[n].get("rows", []))
            for n in ns
        ),
        "",
    ]
    notes = res.get("fanout_notes") or {}
    L += [f"- `{k}`: {v}" for k, v in notes.items()]
    bad = [r for n in ns for r in blocks[n].get("runs", []) if r["ok"] != r["hosts"]]
    if bad:
        L += ["", "Runs where not every host answered:", ""]
        L += [
            f"- N={r['n']} {r['client']} rep{r['rep']}: ok {r['ok']}/{r['hosts']} rc {r['process']['rc']}: "
            f"`{(r.get('first_errors') or [r.get('stderr_tail', '')[-200:]])[0]}`".replace("\n", " ")
            for r in bad[:12]
        ]
    return L + [""]


def full_md(res: dict) -> list[str]:
    full = res.get("full", {})
    if not full:
        return []
    L = [
        "## 2. The whole shipped runbook, verify only",
        "",
        "`runbook run --all --new-run --json` in a fresh process. CPU = process + children; peak RSS "
        "of the process.",
        "",
        "| N | steps | wall s | CPU s | peak RSS MB | state on disk MB | sim CPU s | exit | host verdicts |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for n in sorted(full, key=int):
        b = full[n]
        rc = "killed at the time limit" if b.get("timed_out") else b.get("rc")
        L.append(
            f"| {n} | {b.get('steps')} | {f(b.get('wall'))} | {f(b.get('cpu'))} | {f(b.get('maxrss_mb'), 0)} "
            f"| {f(b.get('state_mb'), 0)} | {f(b.get('server_cpu'))} | {rc} | "
            + ", ".join(f"{k} {v}" for k, v in sorted((b.get("host_verdicts") or {}).items()))
            + " |"
        )
    for n in sorted(full, key=int):
        if full[n].get("breakdown"):
            L += ["", f"Per step at N={n} (last repetition; bench/step_breakdown.py):", ""]
            L += step_breakdown.table(full[n]["breakdown"])
    return L + [""]


def crash_md(res: dict) -> list[str]:
    c = res.get("crash")
    if not c:
        return []
    L = ["## 4. Crash-resume", ""]
    if c.get("error"):
        return L + [f"Not measured: {c['error']}", ""]
    L += [
        f"N={c['n']}: {c['trials']} trials, SIGKILL at a random moment of `runbook run --all` "
        f"(uniform over 5-95% of the uninterrupted run, {f(c['reference_wall'])}s), then "
        "`runbook run --resume`; verdicts of `runbook status --json` compared with the uninterrupted run, "
        "host by host. Resume wall = reopening the store (a stale lock taken over, in-flight commands "
        "marked interrupted) plus the work that was left. `status` wall = a fresh process reopening "
        "the finished run and printing its verdicts.",
        "",
        "| trials | killed mid-run | final verdicts equal (all / killed) | resume wall median / max s "
        "| uninterrupted run s | `runbook status --json` wall s |",
        "|---|---|---|---|---|---|",
        f"| {c['trials']} | {c['killed']} | {c['equal']}/{c['trials']} / {c['equal_killed']}/{c['killed']} "
        f"| {f(c['resume_wall_median'])} / {f(c['resume_wall_max'])} | {f(c['reference_wall'])} "
        f"| {f(c.get('status_wall_median'))} |",
        "",
    ]
    bad = [t for t in c["trial_records"] if not t["equal"]]
    for t in bad[:5]:
        L.append(f"- trial {t['trial']} (kill at {t['kill_after_s']}s): {'; '.join(t['differences'])}")
    return L + [""]


def external_md(title: str, e: dict | None) -> list[str]:
    """What the owner's script printed (a Markdown table), as it printed it."""
    if not e:
        return []
    L = [title, ""]
    if not e.get("present"):
        return L + [e.get("note", "not run"), ""]
    L += [f"`python {' '.join(e['argv'])}`: exit {e['rc']}, {e['wall']} s. Its output:", ""]
    text = (e.get("stdout") or "").strip()
    if e["rc"] == 0 and "|" in text:
        L.append(text)
    elif text:
        L += ["```", text[-3000:], "```"]
    if e.get("stderr_tail"):
        L += ["", "stderr:", "```", e["stderr_tail"].strip(), "```"]
    return L + [""]


def render(res: dict) -> str:
    m = res.get("meta", {})
    L = [
        f"# Benchmark results ({m.get('mode', '?')} mode, {m.get('date', '')})",
        "",
        f"{m.get('machine', '')}. {m.get('versions', '')}. Total {f(m.get('elapsed_s'), 0)} s. "
        "Shared, noisy machine: only the ratios measured side by side in the same run mean much.",
        "",
    ]
    if m.get("time_scale") is not None:
        L += [
            f"Labs started with `runbook sim --time-scale {m['time_scale']:g}`: the long tests' "
            "modelled durations (DCGM diag, burn-in, bandwidth, NCCL) scaled by it.",
            "",
        ]
    t = targets(res)
    if t:
        L += ["## Targets", "", "| target | measured | met |", "|---|---|---|"]
        L += [
            f"| {x['what']} | {x['value']} | {'-' if x['met'] is None else ('yes' if x['met'] else '**no**')} |"
            for x in t
        ]
        L.append("")
    L += fanout_md(res) + full_md(res)
    L += external_md("## 3. Store (bench/store_bench.py)", res.get("store"))
    L += crash_md(res)
    L += external_md("## 5. UI latency (bench/tui_latency.py)", res.get("tui"))
    if res.get("errors"):
        L += ["## Sections that failed", ""] + [f"- {k}: `{v}`" for k, v in res["errors"].items()] + [""]
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render(json.load(open(sys.argv[1]))))
