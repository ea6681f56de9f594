#!/usr/bin/env python3
"""Cold `runbook run --step STEP` counted in instructions, not seconds: each run under
valgrind's callgrind, which counts the instructions the process executes. On this
shared machine the speed drifts 10-30 % within minutes (bench/README.md), so a change of
a few milliseconds at start-up hides in any timing; an instruction count of the same
run varies by about 0.1 %, whatever the machine is doing meanwhile.

    python bench/cold_instructions.py [--baseline-tree BASE] [--nodes 48] [--reps 3] [--step ofed-version]

Runs, on one lab, alternating: this checkout, the baseline tree (if given) and raw
asyncssh (bench/raw_asyncssh.py, cold) as bench/fanout.py runs them, each tree with its
own bytecode cache and a state directory kept across its runs (each run a `--new-run`);
one discarded run of each fills the caches first. Under callgrind a run is ~40x slower,
so the simulated lab answers at once by comparison: the counts are the client's own work.
Counted: the Python process itself. A child it starts is not (raw asyncssh's import runs
gcc and ld to look for liboqs, ~35 ms that runbook skips: transport/library_probe.py),
nor is the kernel's work (system calls), nor is SHA-256 counted as the CPU runs it
(valgrind hides the SHA extensions, so OpenSSL takes its generic path). Needs valgrind
(`apt-get install valgrind`).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from lab import REPO, Lab  # noqa: E402

_COLLECTED = re.compile(r"Collected : (\d+)")


def _counted(argv: list[str], env: dict, log: Path) -> tuple[int | None, int]:
    """(instructions, exit code) of one run under callgrind."""
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", f"--log-file={log}", *argv]
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
    m = _COLLECTED.search(log.read_text(errors="replace"))
    return (int(m.group(1)) if m else None), proc.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline-tree", help="also count `runbook run` of this tree (e.g. a `git archive`)")
    ap.add_argument("--nodes", type=int, default=48)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--step", default="ofed-version")
    a = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2

    env0 = dict(os.environ)
    env0.pop("PYTHONDONTWRITEBYTECODE", None)
    trees = {"runbook (this tree)": REPO}
    if a.baseline_tree:
        trees["runbook (baseline)"] = Path(a.baseline_tree).resolve()
    counts: dict[str, list[int]] = {name: [] for name in [*trees, "raw asyncssh"]}
    failed: dict[str, int] = dict.fromkeys(counts, 0)
    with (
        tempfile.TemporaryDirectory(prefix="cold-instructions-") as tmp,
        Lab.start(a.nodes, Path(tmp), lifetime=3600) as lab,
    ):
        work = Path(tmp)
        files = lab.baseline_files(a.step)
        raw = [sys.executable, "-P", str(HERE / "raw_asyncssh.py"), "--hosts-file", str(files["hosts"])]
        raw += ["--key", str(lab.key), "--known-hosts", str(lab.known_hosts)]
        raw += ["--command", lab.command(a.step), "--mode", "cold"]
        runs: dict[str, tuple[list[str], dict]] = {"raw asyncssh": (raw, env0)}
        for i, (name, tree) in enumerate(trees.items()):
            argv = [sys.executable, "-P", "-m", "runbook", "run", "--steps", str(tree / "steps")]
            argv += ["--inventory", str(lab.inventory), "--state", str(work / f"state-{i}")]
            argv += ["--new-run", "--json", "--step", a.step]
            runs[name] = (argv, dict(env0, PYTHONPATH=str(tree), PYTHONPYCACHEPREFIX=str(work / f"pyc-{i}")))
        for argv, env in runs.values():  # discarded: bytecode, the state's caches
            _counted(argv, env, work / "warm.log")
        for rep in range(a.reps):
            order = list(runs)[rep % len(runs) :] + list(runs)[: rep % len(runs)]
            for name in order:
                n, rc = _counted(*runs[name], work / f"{rep}.log")
                if n is None or rc not in (0, 1):
                    failed[name] += 1
                    continue
                counts[name].append(n)
                print(f"  rep {rep} {name:20} {n / 1e6:9.1f} M instructions", file=sys.stderr)
    raw_med = statistics.median(counts["raw asyncssh"]) if counts["raw asyncssh"] else None
    print(f"# cold `runbook run --step {a.step}`, {a.nodes} nodes, {a.reps} runs each, under callgrind")
    print("| client | instructions, median (M) | min - max (M) | / raw asyncssh | runs failed |")
    print("|---|---|---|---|---|")
    for name, ns in counts.items():
        if not ns:
            print(f"| {name} | - | - | - | {failed[name]} |")
            continue
        med = statistics.median(ns)
        ratio = f"{med / raw_med:.3f}" if raw_med else "-"
        print(
            f"| {name} | {med / 1e6:.1f} | {min(ns) / 1e6:.1f} - {max(ns) / 1e6:.1f} | {ratio} | {failed[name]} |"
        )
    return 0 if not any(failed.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
