#!/usr/bin/env python3
"""Read-only verifies of one host in one SSH channel (engine/batchrun.py), off
vs on, paired: `runbook run --all --new-run --json` from this checkout with
RUNBOOK_BATCH_VERIFY=0 and =1, alternating which goes first, against one
running lab. Prints per run the wall, the client's CPU (getrusage of the child)
and the lab's CPU (its process group), the medians, and whether both found the
same per-step per-host status, reason (exact, and with numbers masked) and
exit status. Keeps each run's per-step breakdown (bench/step_breakdown.py).

    python bench/batch_paired.py --nodes 48 --pairs 5 --time-scale 0 \\
        -o bench/results/batch-48.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from pipeline import compare_verdicts, differ, lab_arguments, paired_runs, publish, switched  # noqa: E402

MODES = {"off": "0", "on": "1"}
run_once = switched("RUNBOOK_BATCH_VERIFY", MODES)


def exit_statuses(doc: dict) -> dict:
    return {
        (s["id"], h): v.get("exit_status")
        for s in doc.get("steps", [])
        for h, v in s.get("hosts", {}).items()
    }


def markdown(out: dict) -> str:
    L = [
        f"# Batched verifies off vs on: whole runbook, verify only, {out['nodes']} nodes "
        f"({out['scenario']} lab, time scale {out['time_scale'] if out['time_scale'] is not None else 1})",
        "",
        "| pair | mode | order | wall s | client CPU s | lab CPU s | rc | load1 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for i in range(out["pairs"]):
        for mode in ("off", "on"):
            r = out["runs"][mode][i]
            first = ("off" if i % 2 == 0 else "on") == mode
            L.append(
                f"| {i} | {mode} | {'first' if first else 'second'} | {r['wall']:.2f} | {r['cpu']:.2f} "
                f"| {r['lab_cpu']:.2f} | {r['rc']} | {r['load1']} |"
            )
    for mode in ("off", "on"):
        m = out["median"][mode]
        L.append(f"| **median** | {mode} | | {m['wall']:.2f} | {m['cpu']:.2f} | {m['lab_cpu']:.2f} | | |")
    L += ["", "Verdicts compared in each pair (per step and host: status, reason, exit status):", ""]
    for c in out["compared"]:
        L.append(
            f"- pair {c['pair']}: {c['entries']} entries; differ: {len(c['differ_exact'])} exactly, "
            f"{len(c['differ_masked'])} with numbers masked, {len(c['exit_differ'])} exit statuses"
        )
    return "\n".join(L) + "\n"


def compare(i: int, off: dict, on: dict) -> dict:
    """pipeline.py's comparison, and the hosts' exit statuses too."""
    c = compare_verdicts(i, off, on)
    ex = differ(exit_statuses(off), exit_statuses(on))
    print(f"pair {i}: {len(ex)} exit statuses differ", flush=True)
    return {**c, "exit_differ": ex[:20]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    lab_arguments(ap, pairs=3)
    a = ap.parse_args()
    runs, compared = paired_runs(a, ("off", "on"), run_once, compare)
    publish(a, runs, compared, markdown)


if __name__ == "__main__":
    main()
