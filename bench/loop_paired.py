#!/usr/bin/env python3
"""The event loop (runbook/event_loop.py), asyncio's own vs uvloop, paired: the
whole runbook, verify only (`runbook run --all --new-run --json`), from this
checkout with RUNBOOK_UVLOOP=0 and =1 for both the client and the simulator, a
new lab for every run (started with the same setting), alternating which goes
first. Prints per run the wall, the client's CPU and the lab's, the medians, and
whether both found the same per-step per-host statuses and reasons.

    python bench/loop_paired.py --nodes 1000 --pairs 2 --time-scale 0 \\
        -o bench/results/loop-1000.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from measure import ServerCPU  # noqa: E402
from pipeline import compare_verdicts, markdown, paired_runs, publish  # noqa: E402
from pipeline import run_once as pipeline_run  # noqa: E402

# pipeline.py's labels, so its tables read "base" (asyncio) and "change" (uvloop)
LOOPS = {"base": "0", "change": "1"}


def run_once(label: str, inventory: Path, state: Path, server: ServerCPU) -> dict:
    return pipeline_run(REPO, inventory, state, server, {"RUNBOOK_UVLOOP": LOOPS[label]})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--nodes", type=int, default=48)
    ap.add_argument("--scenario", choices=("compliant", "demo"), default="compliant")
    ap.add_argument("--time-scale", type=float, help="runbook sim --time-scale (0: no modelled test waits)")
    ap.add_argument("-o", "--out", type=Path)
    a = ap.parse_args()
    a.fresh_lab = True
    runs, compared = paired_runs(
        a,
        ("base", "change"),
        run_once,
        compare_verdicts,
        lab_env=lambda label: {"RUNBOOK_UVLOOP": LOOPS[label]},
    )
    publish(
        a,
        runs,
        compared,
        lambda out: markdown(out).replace(
            "# Whole runbook", "# asyncio (base) vs uvloop (change): whole runbook", 1
        ),
    )


if __name__ == "__main__":
    main()
