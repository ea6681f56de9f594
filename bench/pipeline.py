"""The whole runbook, verify only, baseline vs change (issue 18, goal 1: steps
pipelined per host): `runbook run --all --new-run --json` from two checkouts,
alternating, against one running lab. Each checkout runs its own steps/ (the
change marks some steps `exclusive`). Prints wall and client CPU per run, the
lab's CPU, and whether both found the same per-step per-host statuses and
reasons (numbers in reasons masked, and exact); keeps each run's per-step
breakdown (bench/step_breakdown.py).

    python bench/pipeline.py --base ../wt-main --pairs 2 --nodes 48 \\
        [--scenario demo] [--time-scale 0] [--fresh-lab] -o bench/results/pipeline-48.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from lab import COMPLIANT, DEMO, Lab  # noqa: E402
from measure import ServerCPU, set_aside  # noqa: E402
from step_breakdown import breakdown, run_dir  # noqa: E402

_NUM = re.compile(r"\d+(\.\d+)?")


def run_once(
    checkout: Path, inventory: Path, state: Path, server: ServerCPU, env_extra: dict[str, str] | None = None
) -> dict:
    """One `runbook run --all --new-run --json` of `checkout` (its own steps/), with
    `env_extra` in its environment (bench/batch_paired.py: a switch)."""
    argv = [sys.executable, "-m", "runbook", "run", "--steps", str(checkout / "steps")]
    argv += ["--inventory", str(inventory), "--state", str(state), "--all", "--new-run", "--json"]
    env = dict(os.environ, PYTHONPATH=str(checkout), **(env_extra or {}))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    lab0 = server.total()
    t0 = time.monotonic()
    p = subprocess.run(argv, cwd=checkout, env=env, capture_output=True, text=True, timeout=1800)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    doc = json.loads(p.stdout) if p.stdout.strip().startswith("{") else {}
    bd = breakdown(run_dir(state, None) / "journal.jsonl") if state.exists() else {}
    return {
        "wall": round(wall, 2),
        "cpu": round(cpu, 3),
        "lab_cpu": round(server.total() - lab0, 2),
        "rc": p.returncode,
        "doc": doc,
        "breakdown": bd,
        "stderr_tail": p.stderr[-800:] if not doc else "",
    }


def verdicts(doc: dict, mask: bool) -> dict:
    out = {}
    for s in doc.get("steps", []):
        out[s["id"]] = s["status"]
        for h, v in s.get("hosts", {}).items():
            reason = v.get("reason", "")
            out[(s["id"], h)] = (v["status"], _NUM.sub("#", reason) if mask else reason)
    return out


def differ(a: dict, b: dict) -> list[str]:
    return sorted(str(k) for k in set(a) | set(b) if a.get(k) != b.get(k))


def breakdown_table(base: dict, change: dict) -> list[str]:
    """Per step, base vs change: when it started and how long it took (s after RunStarted)."""
    rows_b = {r["step"]: r for r in base.get("steps", [])}
    rows_c = {r["step"]: r for r in change.get("steps", [])}
    L = [
        "| step | base at | base wall | base slowest host | change at | change wall | change slowest host |",
        "|---|---|---|---|---|---|---|",
    ]
    for sid in list(rows_b) + [s for s in rows_c if s not in rows_b]:
        b, c = rows_b.get(sid, {}), rows_c.get(sid, {})
        cells = [sid]
        for r in (b, c):
            cells += (
                [f"{r['at_s']:.2f}", f"{r['wall_s']:.2f}", f"{r['cmd_max_s']:.2f}"] if r else ["", "", ""]
            )
        L.append("| " + " | ".join(cells) + " |")
    L.append(f"\nrun (RunStarted → RunFinished): base {base.get('run_s')} s, change {change.get('run_s')} s")
    return L


def markdown(out: dict) -> str:
    L = [
        f"# Whole runbook, verify only, {out['nodes']} nodes ({out['scenario']} lab, "
        f"time scale {out['time_scale'] if out['time_scale'] is not None else 1}"
        f"{', a new lab for every run' if out.get('fresh_lab') else ''})",
        "",
        "| run | order | wall s | client CPU s | lab CPU s | load1 |",
        "|---|---|---|---|---|---|",
    ]
    for i in range(out["pairs"]):
        for which in ("base", "change"):
            r = out["runs"][which][i]
            order = "first" if which == ("base" if i % 2 == 0 else "change") else "second"
            L.append(
                f"| {which} {i} | {order} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['lab_cpu']:.2f} | {r['load1']} |"
            )
    for which in ("base", "change"):
        m = out["median"][which]
        L.append(f"| **{which} median** | | {m['wall']:.2f} | {m['cpu']:.2f} | {m['lab_cpu']:.2f} | |")
    L += ["", "Verdicts (per step, per host: status and reason) compared in each pair:", ""]
    for c in out["compared"]:
        L.append(
            f"- pair {c['pair']}: {c['entries']} entries, {len(c['differ_exact'])} differ exactly, "
            f"{len(c['differ_masked'])} with numbers masked"
        )
    L += ["", "## Per step, first pair", ""]
    L += breakdown_table(out["runs"]["base"][0]["breakdown"], out["runs"]["change"][0]["breakdown"])
    return "\n".join(L) + "\n"


def compare_verdicts(i: int, first: dict, second: dict) -> dict:
    """Pair i's two `--json` documents: per step and host, status and reason,
    exactly and with numbers masked (printed, and returned for the results)."""
    exact = differ(verdicts(first, False), verdicts(second, False))
    masked = differ(verdicts(first, True), verdicts(second, True))
    n = len(verdicts(first, False))
    print(f"pair {i}: {n} step/host verdicts, {len(exact)} differ exactly, {len(masked)} masked", flush=True)
    return {"pair": i, "entries": n, "differ_exact": exact[:20], "differ_masked": masked[:20]}


def paired_runs(
    a, labels: tuple[str, str], run, compare, lab_env=None
) -> tuple[dict[str, list[dict]], list[dict]]:
    """A lab of a.nodes (a.scenario, a.time_scale); a.pairs pairs of `run(label,
    inventory, state, server)`, alternating which label goes first, each in a state
    of its own; each pair's two documents given to `compare(i, first, second)` in
    the labels' order. With a.fresh_lab a new lab for every run: the simulator's
    state grows with every run it serves (its nodes keep each run's job
    directories: 42 MB of saved state after one whole runbook at 1,000 nodes, 54 MB
    after two), so on one lab the second of a pair does not meet what the first
    met. `lab_env(label)`: environment variables the lab of that label's runs is
    started with (a new lab for every run). Also bench/batch_paired.py's and
    bench/loop_paired.py's."""
    work = Path(tempfile.mkdtemp(prefix="paired-bench-"))
    scenario = COMPLIANT if a.scenario == "compliant" else DEMO
    fresh = getattr(a, "fresh_lab", False) or lab_env is not None

    def start(where: Path, label: str | None = None) -> Lab:
        env = lab_env(label) if lab_env is not None else None
        return Lab.start(a.nodes, where, lifetime=3600, scenario=scenario, time_scale=a.time_scale, env=env)

    lab = None if fresh else start(work)
    runs: dict[str, list[dict]] = {label: [] for label in labels}
    compared = []
    try:
        for i in range(a.pairs):
            docs = {}
            for label in labels if i % 2 == 0 else labels[::-1]:
                if fresh:
                    lab = start(work / f"lab-{label}-{i}", label)
                try:
                    server = ServerCPU(lab.pids())
                    state = work / f"state-{label}-{i}"
                    r = run(label, lab.inventory, state, server)
                finally:
                    if fresh:
                        lab.stop()
                set_aside(state, work)
                docs[label] = r.pop("doc")
                r["load1"] = round(os.getloadavg()[0], 2)
                runs[label].append(r)
                print(
                    f"pair {i} {label:6}: wall {r['wall']:.2f}s client cpu {r['cpu']:.2f}s "
                    f"lab cpu {r['lab_cpu']:.2f}s rc {r['rc']} load1 {r['load1']} {r['stderr_tail']}",
                    flush=True,
                )
            compared.append(compare(i, docs[labels[0]], docs[labels[1]]))
    finally:
        if lab is not None and not fresh:
            lab.stop()
        shutil.rmtree(work, ignore_errors=True)
    return runs, compared


def publish(a, runs: dict[str, list[dict]], compared: list[dict], to_markdown) -> None:
    """The medians printed; the runs, comparisons and medians to OUT.json and
    `to_markdown` of them to OUT.md (also bench/batch_paired.py's)."""
    med = {
        k: {m: statistics.median(r[m] for r in v) for m in ("wall", "cpu", "lab_cpu")}
        for k, v in runs.items()
    }
    out = {
        "nodes": a.nodes,
        "scenario": a.scenario,
        "time_scale": a.time_scale,
        "pairs": a.pairs,
        "fresh_lab": getattr(a, "fresh_lab", False),
        "median": med,
        "compared": compared,
        "runs": runs,
        "python": sys.executable,
    }
    print(json.dumps(med))
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(out, indent=1, default=str) + "\n")
        a.out.with_suffix(".md").write_text(to_markdown(out))


def lab_arguments(ap: argparse.ArgumentParser, pairs: int) -> None:
    """The lab, the pairs and the output: asked alike here, in batch_paired.py and
    in loop_paired.py."""
    ap.add_argument("--pairs", type=int, default=pairs)
    ap.add_argument("--nodes", type=int, default=48)
    ap.add_argument("--scenario", choices=("compliant", "demo"), default="compliant")
    ap.add_argument("--time-scale", type=float, help="runbook sim --time-scale (0: no modelled test waits)")
    ap.add_argument("-o", "--out", type=Path)


def switched(variable: str, values: dict[str, str]):
    """run_once of this checkout with `variable` set to values[label]: a switch's
    two settings paired (batch_paired.py, loop_paired.py)."""

    def run(label: str, inventory: Path, state: Path, server: ServerCPU) -> dict:
        return run_once(REPO, inventory, state, server, {variable: values[label]})

    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", type=Path, required=True, help="the baseline checkout (a worktree of main)")
    ap.add_argument("--change", type=Path, default=REPO, help="the changed checkout (default: this one)")
    lab_arguments(ap, pairs=2)
    ap.add_argument("--fresh-lab", action="store_true", help="a new lab for every run (see paired_runs)")
    ap.add_argument("--md-only", action="store_true", help="only rewrite OUT's .md from OUT (the JSON)")
    a = ap.parse_args()
    if a.md_only:
        a.out.with_suffix(".md").write_text(markdown(json.loads(a.out.read_text())))
        return
    runs, compared = paired_runs(
        a,
        ("base", "change"),
        lambda which, inventory, state, server: run_once(
            a.base if which == "base" else a.change, inventory, state, server
        ),
        compare_verdicts,
    )
    publish(a, runs, compared, markdown)


if __name__ == "__main__":
    main()
