#!/usr/bin/env python3
"""Cold `runbook run --step STEP`, this checkout against a baseline tree, in many
alternating pairs on one lab: the differences within each pair, not two medians.

On this shared machine the speed of both trees drifts by 10-20 % from one minute to
the next (bench/README.md); a change of a few milliseconds at start-up is only seen in
the difference of two runs made back to back, the order swapped every pair.

    python bench/cold_paired.py --baseline-tree BASE [--nodes 48] [--pairs 40] [--step ofed-version]

Each tree runs as installed (bytecode cached under its own prefix) with `python -P`,
its own steps/, and a state directory of its own kept across its runs (each run a
`--new-run`, as a site directory keeps its state/; --fresh-state: a new one for every
run, a site's first run); two discarded runs of each fill the bytecode and the
state's caches first. Per run: wall (spawn to wait4) and CPU (user +
sys of the process and its children, from wait4). Prints the medians of each tree and
the median and mean of the paired differences (this tree minus the baseline).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from lab import REPO, Lab  # noqa: E402


def _run(tree: Path, env: dict, inventory: Path, state: Path, step: str) -> tuple[float, float, int]:
    args = [sys.executable, "-P", "-m", "runbook", "run", "--steps", str(tree / "steps"), "--step", step]
    args += ["--inventory", str(inventory), "--state", str(state), "--new-run", "--json"]
    t = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, ru = os.wait4(proc.pid, 0)
    return time.perf_counter() - t, ru.ru_utime + ru.ru_stime, os.waitstatus_to_exitcode(status)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline-tree", required=True)
    ap.add_argument("--nodes", type=int, default=48)
    ap.add_argument("--pairs", type=int, default=40)
    ap.add_argument("--step", default="ofed-version")
    ap.add_argument(
        "--fresh-state", action="store_true", help="a new --state for every run (a site's first run)"
    )
    ap.add_argument("--json", help="also write every run here")
    a = ap.parse_args()

    env0 = dict(os.environ)
    env0.pop("PYTHONDONTWRITEBYTECODE", None)
    trees = {"this tree": REPO, "baseline": Path(a.baseline_tree).resolve()}
    runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name in trees}
    with (
        tempfile.TemporaryDirectory(prefix="cold-paired-") as tmp,
        Lab.start(a.nodes, Path(tmp), lifetime=900) as lab,
    ):
        work = Path(tmp)
        envs = {
            name: dict(env0, PYTHONPATH=str(tree), PYTHONPYCACHEPREFIX=str(work / f"pyc-{i}"))
            for i, (name, tree) in enumerate(trees.items())
        }

        count = iter(range(10**9))

        def run(name: str) -> tuple[float, float, int]:
            state = work / f"state-{list(trees).index(name)}"
            if a.fresh_state:
                state = work / f"state-{list(trees).index(name)}-{next(count)}"
            return _run(trees[name], envs[name], lab.inventory, state, a.step)

        for name in trees:  # discarded: bytecode, the state's caches
            run(name), run(name)
        for k in range(a.pairs):
            order = list(trees) if k % 2 == 0 else list(reversed(trees))
            for name in order:
                runs[name].append(run(name))
    bad = {name: sum(1 for r in rs if r[2] not in (0, 1)) for name, rs in runs.items()}
    kept = "a new state every run" if a.fresh_state else "state kept"
    print(f"# cold `runbook run --step {a.step}`, {a.nodes} nodes, {a.pairs} alternating pairs, {kept}")
    print("| tree | wall median s | CPU median s | runs failed |")
    print("|---|---|---|---|")
    for name, rs in runs.items():
        wall = statistics.median(r[0] for r in rs)
        cpu = statistics.median(r[1] for r in rs)
        print(f"| {name} | {wall:.3f} | {cpu:.3f} | {bad[name]} |")
    dw = [x[0] - y[0] for x, y in zip(runs["this tree"], runs["baseline"])]
    dc = [x[1] - y[1] for x, y in zip(runs["this tree"], runs["baseline"])]
    print(
        f"\nthis tree - baseline, per pair: wall median {statistics.median(dw) * 1000:+.1f} ms, "
        f"mean {statistics.mean(dw) * 1000:+.1f} ms; CPU median {statistics.median(dc) * 1000:+.1f} ms, "
        f"mean {statistics.mean(dc) * 1000:+.1f} ms; this tree faster in {sum(1 for d in dw if d < 0)} "
        f"of {a.pairs} pairs"
    )
    if a.json:
        Path(a.json).write_text(json.dumps({"args": vars(a), "runs": runs}, indent=1))
    return 0 if not any(bad.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
