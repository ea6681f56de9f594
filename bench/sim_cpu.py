#!/usr/bin/env python3
"""The simulator's CPU while it serves the whole runbook (verify only) on the
48-node lab: a baseline checkout of the simulator against this one, in
alternating pairs, each on a lab of its own, with the same client (this
checkout's runbook) and steps. Prints the sim's CPU and the run's wall per
run and the medians, and checks that every host-command's output is the same
in both runs (clocks, ids and addresses masked; in pair steps the rail a host's
result came from, see RAIL_MASKS): `outputs_differ` must be 0.

    python bench/sim_cpu.py --baseline /work/wt-simbase [--pairs 3] [--nodes 48]
        [--out bench/results/sim-cpu.json] [--time-scale 0] [--scenario FILE] [--sim-opt=... ] [--no-compare]

The baseline is a directory holding another checkout's runbook/ package (e.g.
`git worktree add --detach /work/wt-simbase main`); its sim runs with that
package first on sys.path. --sim-opt adds options to this checkout's sim only;
--time-scale is given to both sims (0: the long tests without their modelled waits).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from full_runbook import TIMEOUT, argv_all, verdict_counts
from lab import COMPLIANT, REPO, Lab
from measure import ServerCPU, last_json, run_measured

sys.path.insert(0, str(REPO))
from runbook.store.blobs import BlobStore
from runbook.store.journal import blob_refs
from runbook.store.runs import BLOBS_NAME
from runbook.store.storage import JournalReader


def sim_cmd(package_root: Path) -> str:
    """`python -m runbook.sim` with package_root's runbook/ imported, whatever the cwd."""
    code = (
        f"import sys; sys.path.insert(0, {str(package_root)!r}); "
        "from runbook.sim.main import run_sim; sys.exit(run_sim(sys.argv[1:]))"
    )
    return shlex.join([sys.executable, "-c", code])


# What differs between two runs of the same commands on two labs: times, dates,
# run/job ids, temporary names, loopback addresses and ports, durations.
MASKS = [
    (re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{4}\b"), "<run-id>"),
    (re.compile(r"activity count \d+"), "activity count <n>"),  # the SM's heartbeat: a clock
    (re.compile(r"\b127\.\d+\.\d+\.\d+\b"), "127.x"),
    (re.compile(r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?"), "<datetime>"),
    (re.compile(r"\b\d\d:\d\d:\d\d(\.\d+)?\b"), "<time>"),
    (
        re.compile(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b.*"),
        "<date>",
    ),
    (re.compile(r"\b1[6-9]\d{8}(\.\d+)?\b"), "<epoch>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"\b[0-9a-f]{12,64}\b"), "<hex>"),
    (re.compile(r"(/tmp/|runbook[-_.])[\w.-]+"), r"\1<name>"),
    (re.compile(r"\bport \d+\b|:\d{4,5}\b"), "<port>"),
    (re.compile(r"\b(pid|PID)[ =:]*\d+"), r"\1 <pid>"),
    (re.compile(r"\d+\.\d+ ?(s|sec|seconds|ms)\b"), "<dur>"),
]


# A pair step (a peer in the key) records, for each host, the output of the rail
# whose command ended last; at --time-scale 0 which rail that is changes from run
# to run (main against main differs on ib-pair-bw and ib-cross-rail-bw there):
# the rail's device name and LIDs are masked in pair steps only. The rest of the
# output (the format, the bandwidth) is compared as it is.
RAIL_MASKS = [
    (re.compile(r"(Device\s+: )mlx5_\d+"), r"\1<rail>"),
    (re.compile(r"\bLID 0x[0-9a-f]+"), "LID <lid>"),
]


def mask(text: str) -> str:
    for rx, repl in MASKS:
        text = rx.sub(repl, text)
    return text


def outputs(state: Path) -> dict[tuple, str]:
    """Every host-command's output in the run's journal, by (step, action, host, attempt, peer, n)."""
    run = sorted(p for p in state.iterdir() if (p / "journal.jsonl").is_file())[-1]
    found: dict[tuple, str] = {}
    seen: dict[tuple, int] = {}  # how many of a (step, action, host, attempt, peer) so far
    blobs = BlobStore(run / BLOBS_NAME)
    for _line, batch in JournalReader(run / "journal.jsonl").batches():
        for entry in batch:
            e = entry["event"]
            if e.get("type") != "HostFinished":
                continue
            for name, sha in blob_refs(e):  # a long output is kept in a blob
                e[name] = blobs.get(sha)
            base = (e.get("step_id"), e.get("action"), e.get("host"), e.get("attempt"), e.get("peer"))
            n = seen.get(base, 0)  # (a scan of `found` here was quadratic: minutes at 384 nodes)
            seen[base] = n + 1
            text = mask(
                f"{e.get('exit_status')}\n{e.get('status')}\n{e.get('stdout', '')}\n--\n{e.get('stderr', '')}"
            )
            for rx, repl in RAIL_MASKS if e.get("peer") else ():
                text = rx.sub(repl, text)
            found[base + (n,)] = text
    return found


def one_run(
    name: str, root: Path, work: Path, nodes: int, extra: list[str], rep: int, scenario: Path = COMPLIANT
) -> dict:
    os.environ["BENCH_SIM_CMD"] = sim_cmd(root)
    try:
        lab = Lab.start(nodes, work, extra=extra, tag=f"-{name}{rep}", scenario=scenario)
    finally:
        del os.environ["BENCH_SIM_CMD"]
    state = work / f"state-{name}{rep}"
    try:
        server = ServerCPU(lab.pids())
        c0 = server.total()
        t0 = [p.cpu_times() for p in server.procs]
        r = run_measured(argv_all(lab, state), server=server, timeout=TIMEOUT, cwd=str(REPO))
        during = server.total() - c0
        t1 = [p.cpu_times() for p in server.procs]
        split = {  # user (Python) and system (socket calls) CPU of the sim during the run
            "sim_user": round(sum(b.user - a.user for a, b in zip(t0, t1)), 2),
            "sim_sys": round(sum(b.system - a.system for a, b in zip(t0, t1)), 2),
        }
        lab.stop()
        total = server.total()  # the stop (its last save) included: gone with the process, so read before
    finally:
        lab.stop()
    doc = last_json(r.stdout)
    hosts, steps = verdict_counts(doc)
    rec = {
        "variant": name,
        "rep": rep,
        "wall": round(r.wall, 2),
        "client_cpu": round(r.cpu, 2),
        "sim_cpu": round(during, 2),
        "sim_cpu_with_stop": round(total - c0, 2) if total else None,
        **split,
        "rc": r.rc,
        "host_verdicts": hosts,
        "step_statuses": steps,
        "state": str(state),
    }
    print(
        f"{name:9s} rep{rep}: wall {r.wall:6.2f}s sim cpu {during:6.2f}s "
        f"(user {split['sim_user']:.2f} sys {split['sim_sys']:.2f}) client cpu {r.cpu:6.2f}s "
        f"rc {r.rc} hosts {hosts}",
        flush=True,
    )
    return rec


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", type=Path, required=True, help="a checkout whose runbook/ is the baseline")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--nodes", type=int, default=48)
    ap.add_argument("--sim-opt", action="append", default=[], help="an option for this checkout's sim")
    ap.add_argument("--time-scale", type=float, default=None, help="`runbook sim --time-scale`, both sims")
    ap.add_argument(
        "--scenario",
        type=Path,
        default=COMPLIANT,
        help="the labs' scenario, both sims (default: no faults; runbook/sim/scenarios/default.yaml: the demo's)",
    )
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "sim-cpu.json")
    ap.add_argument("--keep", action="store_true", help="keep the labs and state directories")
    ap.add_argument(
        "--no-compare",
        action="store_true",
        help="skip the output comparison (it takes minutes past a few hundred nodes; run it at 48)",
    )
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sim-cpu-"))
    both = [] if args.time_scale is None else ["--time-scale", str(args.time_scale)]
    variants = [("baseline", args.baseline.resolve(), both), ("branch", REPO, both + args.sim_opt)]
    runs, differ, compared = [], [], 0
    t_start = time.time()
    load0 = os.getloadavg()
    for rep in range(args.pairs):
        order = variants if rep % 2 == 0 else variants[::-1]  # alternate who goes first
        pair = {}
        for name, root, extra in order:
            pair[name] = one_run(name, root, work, args.nodes, extra, rep, args.scenario)
            runs.append(pair[name])
        if args.no_compare:
            continue
        a, b = outputs(Path(pair["baseline"]["state"])), outputs(Path(pair["branch"]["state"]))
        keys = set(a) | set(b)
        bad = sorted(k for k in keys if a.get(k) != b.get(k))
        compared += len(keys)
        differ += [{"rep": rep, "key": list(map(str, k))} for k in bad]
        print(f"pair {rep}: {len(keys)} host-commands compared, {len(bad)} differ", flush=True)
        for k in bad[:5]:
            print(
                f"  differs: {k}\n    base: {a.get(k, '<none>')[:300]!r}\n    this: {b.get(k, '<none>')[:300]!r}"
            )
    summary = {}
    for name, _root, _extra in variants:
        rs = [r for r in runs if r["variant"] == name]
        summary[name] = {
            k: statistics.median(r[k] for r in rs)
            for k in ("wall", "sim_cpu", "sim_user", "sim_sys", "client_cpu")
        }
    result = {
        "command": " ".join(shlex.quote(a) for a in sys.argv),
        "nodes": args.nodes,
        "pairs": args.pairs,
        "sim_opts": args.sim_opt,
        "time_scale": args.time_scale,
        "scenario": str(args.scenario),
        "loadavg_before": load0,
        "loadavg_after": os.getloadavg(),
        "cpus": os.cpu_count(),
        "elapsed_s": round(time.time() - t_start, 1),
        "median": summary,
        "host_commands_compared": compared,
        "outputs_differ": None if args.no_compare else len(differ),
        "differ": differ[:50],
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    for name, s in summary.items():
        print(
            f"median {name:9s}: wall {s['wall']:.2f}s sim cpu {s['sim_cpu']:.2f}s client cpu {s['client_cpu']:.2f}s"
        )
    print(f"outputs compared {compared}, differ {len(differ)}; results in {args.out}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if not differ else 1


if __name__ == "__main__":
    sys.exit(main())
