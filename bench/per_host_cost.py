#!/usr/bin/env python3
"""What one host costs the client: the whole shipped runbook, verify only
(`runbook run --all --new-run --json`, as full_runbook.py), on two simulated
labs of different sizes, runs alternated (small, large, small, large, ...)
so the drift of this shared machine hits both sizes alike.

The client's CPU is its own and its children's (wait4, bench/measure.py),
apart from the sim's (its processes read from /proc). The slope between the
two sizes is the CPU one more host costs, the intercept the fixed cost
(imports, loading, the summary). Divided by the runbook's steps it is the CPU
per host per step; divided into 600 s it is the largest fleet one core
verifies in 10 minutes, CPU-bound. The same slope of the wall time gives the
wall-bound size on this machine, where the sim runs on the same two cores
as the client (its CPU is reported next to the client's).

    python bench/per_host_cost.py --ns 24,96 --reps 3 -o bench/results/per-host-cost
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

from full_runbook import TIMEOUT, argv_all, verdict_counts
from lab import Lab
from measure import ServerCPU, last_json, median, publish, run_measured

BUDGET = 600.0  # s: "verified in 10 minutes"


def slope(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares line through (x, y): (slope, intercept)."""
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return b, my - b * mx


def quadratic(xs: list[float], ys: list[float]) -> tuple[float, float, float]:
    """Least-squares y = a + b x + c x^2 (three sizes or more): (a, b, c), from the
    normal equations solved by Gaussian elimination (no numpy for three unknowns)."""
    m = [
        [sum(x ** (i + j) for x in xs) for j in range(3)] + [sum(y * x**i for x, y in zip(xs, ys))]
        for i in range(3)
    ]
    for col in range(3):
        piv = max(range(col, 3), key=lambda r: abs(m[r][col]))
        m[col], m[piv] = m[piv], m[col]
        for r in range(3):
            if r != col:
                f = m[r][col] / m[col][col]
                m[r] = [v - f * w for v, w in zip(m[r], m[col])]
    a, b, c = (m[i][3] / m[i][i] for i in range(3))
    return a, b, c


def fleet_in(budget: float, a: float, b: float, c: float) -> int | None:
    """The largest N with a + b N + c N^2 <= budget."""
    if c <= 0:
        return int((budget - a) / b) if b > 0 else None
    return int((-b + (b * b + 4 * c * (budget - a)) ** 0.5) / (2 * c))


def one_run(lab: Lab, work: Path, rep: int) -> dict:
    state = work / f"state{lab.nodes}-{rep}"
    r = run_measured(argv_all(lab, state), server=ServerCPU(lab.pids()), timeout=TIMEOUT)
    doc = last_json(r.stdout)
    hosts, steps = verdict_counts(doc)
    shutil.rmtree(state, ignore_errors=True)
    rec = {
        "n": lab.nodes,
        "rep": rep,
        "process": r.record(),
        "steps": len(doc.get("steps", [])),
        "host_verdicts": hosts,
        "host_commands": sum(hosts.values()),  # one verdict per (step, host) the run reached
        "step_statuses": steps,
    }
    if not doc:
        rec["stderr_tail"] = r.stderr[-1500:]
    print(
        f"  N={lab.nodes} rep{rep}: wall {r.wall:.2f}s client cpu {r.cpu:.2f}s sim cpu "
        f"{r.server_cpu:.2f}s other {r.other_cpu:.2f}s rc {r.rc} host verdicts {rec['host_commands']}",
        flush=True,
    )
    return rec


def summarize(runs: list[dict], ns: list[int]) -> dict:
    per_n = {}
    for n in ns:
        rs = [r for r in runs if r["n"] == n]
        per_n[n] = {
            "n": n,
            "wall": median([r["process"]["wall"] for r in rs]),
            "cpu": median([r["process"]["cpu"] for r in rs]),
            "sim_cpu": median([r["process"]["server_cpu"] for r in rs]),
            "other_cpu": median([r["process"]["other_cpu"] for r in rs]),
            "host_commands": median([r["host_commands"] for r in rs]),
            "steps": rs[-1]["steps"],
            "host_verdicts": rs[-1]["host_verdicts"],
        }
    xs = [float(n) for n in ns]
    cpu_b, cpu_a = slope(xs, [per_n[n]["cpu"] for n in ns])
    wall_b, wall_a = slope(xs, [per_n[n]["wall"] for n in ns])
    sim_b, _ = slope(xs, [per_n[n]["sim_cpu"] for n in ns])
    cmd_b, _ = slope(xs, [per_n[n]["host_commands"] for n in ns])
    steps = per_n[ns[-1]]["steps"]
    # Also per run pair (rep by rep), to show the spread of the slope.
    pair_slopes = []
    lo, hi = ns[0], ns[-1]
    for rep in sorted({r["rep"] for r in runs}):
        a = [r for r in runs if r["n"] == lo and r["rep"] == rep]
        b = [r for r in runs if r["n"] == hi and r["rep"] == rep]
        if a and b:
            pair_slopes.append((b[0]["process"]["cpu"] - a[0]["process"]["cpu"]) / (hi - lo))
    # Between neighbouring sizes: a per-host cost that grows with N shows here.
    segments = [(a, b, (per_n[b]["cpu"] - per_n[a]["cpu"]) / (b - a)) for a, b in zip(ns, ns[1:]) if b > a]
    quad = quadratic(xs, [per_n[n]["cpu"] for n in ns]) if len(ns) >= 3 else None
    return {
        "per_n": per_n,
        "cpu_quadratic": quad,
        "fleet_per_core_quadratic": fleet_in(BUDGET, *quad) if quad else None,
        "cpu_per_host_segments": segments,
        "cpu_per_host": cpu_b,
        "cpu_fixed": cpu_a,
        "cpu_per_host_pairs": pair_slopes,
        "sim_cpu_per_host": sim_b,
        "wall_per_host": wall_b,
        "wall_fixed": wall_a,
        "steps": steps,
        "host_commands_per_host": cmd_b,
        "cpu_per_host_step": cpu_b / steps if steps else None,
        "cpu_per_host_command": cpu_b / cmd_b if cmd_b else None,
        "fleet_per_core_cpu_bound": int((BUDGET - cpu_a) / cpu_b) if cpu_b > 0 else None,
        "fleet_wall_bound_here": int((BUDGET - wall_a) / wall_b) if wall_b > 0 else None,
        "cores": os.cpu_count(),
    }


def markdown(s: dict, ns: list[int], reps: int) -> str:
    ms = lambda x: f"{x * 1000:.1f}"
    out = [
        "# The client's CPU per host (whole runbook, verify only)",
        "",
        f"`python bench/per_host_cost.py --ns {','.join(map(str, ns))} --reps {reps}`: "
        "`runbook run --steps steps --inventory LAB/inventory.yaml --state S --all --new-run --json` "
        f"on compliant sim labs, sizes alternated, medians of {reps} runs; {s['cores']} cores shared "
        "by the client and the sim (and by whatever else ran: `other cpu`).",
        "",
        "| N | steps | host verdicts | wall s | client CPU s | sim CPU s | other CPU s |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in ns:
        p = s["per_n"][n]
        out.append(
            f"| {n} | {p['steps']} | {p['host_commands']:.0f} | {p['wall']:.2f} | {p['cpu']:.2f} | "
            f"{p['sim_cpu']:.2f} | {p['other_cpu']:.2f} |"
        )
    pairs = ", ".join(ms(x) for x in s["cpu_per_host_pairs"])
    core = s["fleet_per_core_cpu_bound"]
    out += [
        "",
        f"* client CPU per host (slope): **{ms(s['cpu_per_host'])} ms** (run pairs: {pairs} ms); "
        f"fixed cost {s['cpu_fixed']:.2f} s; between sizes: "
        + ", ".join(f"{a}->{b}: {ms(x)} ms" for a, b, x in s["cpu_per_host_segments"]),
        f"* per host per step ({s['steps']} steps): **{ms(s['cpu_per_host_step'])} ms**; per host "
        f"verdict ({s['host_commands_per_host']:.1f} per host): {ms(s['cpu_per_host_command'])} ms",
        f"* sim CPU per host: {ms(s['sim_cpu_per_host'])} ms (the servers' side, on the same cores)",
        f"* the largest fleet one core verifies in 10 minutes, client CPU-bound, if every host cost the "
        f"slope: **{core}** hosts; "
        f"one runbook process is one Python thread of work (asyncio), so {s['cores']} cores are "
        f"{s['cores']} runbook processes (one per pod): ~{core * s['cores'] if core else '-'} hosts",
        *(
            [
                f"* the per-host cost grows with N: a + b N + c N^2 through the {len(ns)} sizes gives "
                f"b = {ms(s['cpu_quadratic'][1])} ms, c = {s['cpu_quadratic'][2] * 1e6:.1f} us per host^2; "
                f"600 s of client CPU then holds **{s['fleet_per_core_quadratic']}** hosts per core "
                "(an extrapolation from the largest size measured)"
            ]
            if s.get("cpu_quadratic") and s["cpu_quadratic"][2] > 0
            else []
        ),
        f"* wall per host here: {ms(s['wall_per_host'])} ms, fixed {s['wall_fixed']:.1f} s: "
        f"~{s['fleet_wall_bound_here']} hosts in 10 minutes on this machine with the sim on the same "
        "cores (the steps' own durations and the sim's CPU included; a real fleet serves itself)",
        "",
    ]
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns", default="24,96", help="lab sizes, comma-separated (two or more)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("-o", "--out", help="write OUT.json and OUT.md")
    ap.add_argument("--summarize", metavar="JSON", help="no runs: the page again from an earlier OUT.json")
    args = ap.parse_args()
    if args.summarize:
        import json

        runs = json.loads(Path(args.summarize).read_text())["runs"]
        ns = sorted({r["n"] for r in runs})
        reps = len({r["rep"] for r in runs})
        s = summarize(runs, ns)
        publish(markdown(s, ns, reps), {"summary": s, "runs": runs}, args.out)
        return
    ns = sorted(int(x) for x in args.ns.split(","))
    work = Path(tempfile.mkdtemp(prefix="per-host-cost-"))
    labs = {}
    runs: list[dict] = []
    try:
        for n in ns:
            labs[n] = Lab.start(n, work, lifetime=TIMEOUT * len(ns) * args.reps + 300, timeout=600)
        for rep in range(args.reps):
            order = ns if rep % 2 == 0 else list(reversed(ns))
            for n in order:
                runs.append(one_run(labs[n], work, rep))
    finally:
        for lab in labs.values():
            lab.stop()
        shutil.rmtree(work, ignore_errors=True)
    s = summarize(runs, ns)
    publish(markdown(s, ns, args.reps), {"summary": s, "runs": runs}, args.out)


if __name__ == "__main__":
    main()
