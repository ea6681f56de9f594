#!/usr/bin/env python3
"""A new run's store, created as `runbook run` creates it before its first command:
Store.create with the run's definitions recorded alongside (in a worker thread while
the journal and first checkpoint are written), against Store.create and then
record_definitions (one after the other, as before branch cold3), alternating, in
one state directory that keeps its runs (as a site's `state/` does: a new run links
the definition objects an earlier run wrote).

    python bench/store_create.py --steps steps --inventory LAB/inventory.yaml --state DIR [--reps 30]

Prints wall and CPU (this process, all threads) per way: medians and quartiles.
Wall is mostly fsync latency: it says how busy the disk is as much as anything.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from runbook import __version__  # noqa: E402
from runbook.store.store import Store  # noqa: E402
from runbook.workspace.project import load_project  # noqa: E402
from runbook.workspace.selection import site_of  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", default="steps")
    ap.add_argument("--inventory", required=True)
    ap.add_argument("--state", required=True)
    ap.add_argument("--reps", type=int, default=30)
    a = ap.parse_args()
    project = load_project(a.steps, a.inventory, state=a.state)
    runbook, inventory = project.runbook, project.inventory
    kw = dict(
        site=site_of(inventory),
        operator="bench",
        tool_version=__version__,
        inventory_sha256=inventory.sha256,
        runbook_sha256=runbook.sha256,
    )
    ways = ("alongside", "one after the other")
    wall: dict[str, list[float]] = {w: [] for w in ways}
    cpu: dict[str, list[float]] = {w: [] for w in ways}
    for rep in range(-1, a.reps):  # rep -1: a first run for the later ones to link from
        for way in ways if rep % 2 else ways[::-1]:
            w0, c0 = time.perf_counter(), time.process_time()
            if way == "alongside":
                store = Store.create(a.state, None, definitions=(runbook, inventory), **kw)
            else:
                store = Store.create(a.state, None, **kw)
                store.record_definitions(runbook, inventory)
            w1, c1 = time.perf_counter(), time.process_time()
            store.close()
            if rep >= 0:
                wall[way].append(w1 - w0)
                cpu[way].append(c1 - c0)

    def ms(xs: list[float]) -> str:
        q = statistics.quantiles(xs, n=4)
        return f"{statistics.median(xs) * 1000:.1f} ms (quartiles {q[0] * 1000:.1f}-{q[2] * 1000:.1f})"

    print(f"# new run's store, {len(inventory.hosts)} hosts, {a.reps} alternations")
    for way in ways:
        print(f"{way:20s} wall {ms(wall[way])}; CPU {ms(cpu[way])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
