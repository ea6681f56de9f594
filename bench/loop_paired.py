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
sys.path.insert(0, str(HERE))
from pipeline import compare_verdicts, lab_arguments, markdown, paired_runs, publish, switched  # noqa: E402

# pipeline.py's labels, so its tables read "base" (asyncio) and "change" (uvloop)
LOOPS = {"base": "0", "change": "1"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    lab_arguments(ap, pairs=2)
    a = ap.parse_args()
    a.fresh_lab = True  # the sim's loop is chosen when it starts: a lab per run
    runs, compared = paired_runs(
        a,
        ("base", "change"),
        switched("RUNBOOK_UVLOOP", LOOPS),
        compare_verdicts,
        lab_env=lambda label: {"RUNBOOK_UVLOOP": LOOPS[label]},
    )
    title = "# asyncio (base) vs uvloop (change): whole runbook"
    publish(a, runs, compared, lambda out: markdown(out).replace("# Whole runbook", title, 1))


if __name__ == "__main__":
    main()
