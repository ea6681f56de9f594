#!/usr/bin/env python3
"""The whole runbook, verify only (`runbook run --all --new-run --json`), for
configurations that each name a client tree and a simulator tree, so that a
change on one side is measured apart from the other (pipeline.py runs both
clients against this checkout's simulator). Every run gets a new lab of its
configuration's simulator (a lab's saved state grows with every run it serves);
the configurations run in rounds, the order rotated each round, so the drift of
this shared machine falls on all of them alike. Prints per run the wall, the
client's CPU and the lab's, then the medians.

    python bench/tree_matrix.py --nodes 1000 --reps 3 --time-scale 0 \\
        A=/tmp/base:/tmp/base B=/tmp/new:/tmp/base -o bench/results/matrix-1000.json

NAME=CLIENT:SIM: CLIENT runs `python -m runbook` with its own steps/; SIM's
runbook/ package serves the lab (sim_cpu.sim_cmd).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from lab import Lab  # noqa: E402
from measure import ServerCPU  # noqa: E402
from pipeline import run_once  # noqa: E402
from sim_cpu import sim_cmd  # noqa: E402


def configuration(text: str) -> tuple[str, Path, Path]:
    name, sep, trees = text.partition("=")
    client, sep2, sim = trees.partition(":")
    if not (sep and sep2 and name and client and sim):
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=CLIENT_TREE:SIM_TREE")
    return name, Path(client).resolve(), Path(sim).resolve()


def one_run(name: str, client: Path, sim: Path, a, where: Path) -> dict:
    os.environ["BENCH_SIM_CMD"] = sim_cmd(sim)
    try:
        lab = Lab.start(a.nodes, where, lifetime=3600, time_scale=a.time_scale)
    finally:
        del os.environ["BENCH_SIM_CMD"]
    try:
        rec = run_once(client, lab.inventory, where / "state", ServerCPU(lab.pids()))
    finally:
        lab.stop()
    rec.pop("doc", None)
    return {"name": name, **rec}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("configs", nargs="+", type=configuration, metavar="NAME=CLIENT:SIM")
    ap.add_argument("--nodes", type=int, default=48)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--time-scale", type=float, help="runbook sim --time-scale (0: no modelled test waits)")
    ap.add_argument("-o", "--out", type=Path)
    a = ap.parse_args()
    runs: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="tree-matrix-") as work:
        for rep in range(a.reps):
            k = rep % len(a.configs)
            for name, client, sim in a.configs[k:] + a.configs[:k]:
                rec = one_run(name, client, sim, a, Path(work) / f"{name}-{rep}")
                rec["rep"] = rep
                runs.append(rec)
                print(
                    f"{name:10} rep{rep}: wall {rec['wall']:6.2f}s client cpu {rec['cpu']:6.2f}s "
                    f"lab cpu {rec['lab_cpu']:6.2f}s rc {rec['rc']}",
                    flush=True,
                )
    medians = {}
    for name, client, sim in a.configs:
        mine = [r for r in runs if r["name"] == name]
        medians[name] = {
            "client_tree": str(client),
            "sim_tree": str(sim),
            **{k: round(statistics.median(r[k] for r in mine), 2) for k in ("wall", "cpu", "lab_cpu")},
        }
        m = medians[name]
        print(
            f"median {name:10}: wall {m['wall']:6.2f}s client cpu {m['cpu']:6.2f}s lab cpu {m['lab_cpu']:6.2f}s"
        )
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        doc = {"nodes": a.nodes, "time_scale": a.time_scale, "reps": a.reps, "medians": medians, "runs": runs}
        a.out.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
