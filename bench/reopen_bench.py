"""Reopening a run of 100k events: with its progress database (the normal
case) and without it (a rebuild from the journal, what every open cost before
the progress database).

    python bench/reopen_bench.py [--events 100000] [--repeat 5] [--dir DIR]

The run is filled as bench/store_bench.py fills it (HostStarted/HostFinished
pairs over 1,000 hosts and 30 steps, every 20th output a blob). Prints the
median and the spread of `Store.open(read_only=True)` and of an open for
writing (wall clock, and this process's CPU time), and the sizes.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from store_bench import _fill

from runbook.store import Store
from runbook.store.progress import PROGRESS_NAME


def _open_times(
    state: Path, repeat: int, read_only: bool, drop_progress: bool
) -> tuple[list[float], list[float]]:
    times, cpu = [], []
    for _ in range(repeat):
        if drop_progress:
            for p in state.glob(f"*/{PROGRESS_NAME}"):
                p.unlink()
        t, c = time.perf_counter(), time.process_time()
        with contextlib.redirect_stderr(io.StringIO()):  # the one "rebuilt" line
            store = Store.open(state, read_only=read_only)
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        store.close()
    return times, cpu


def _row(name: str, measured: tuple[list[float], list[float]]) -> str:
    xs, cpu = measured
    return (
        f"| {name} | {statistics.median(xs):.3f} | {min(xs):.3f} | {max(xs):.3f} "
        f"| {statistics.median(cpu):.3f} |"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", help="where to write the run (default: a temp dir, removed after)")
    args = ap.parse_args()
    root = Path(args.dir or tempfile.mkdtemp(prefix="reopen-bench-"))
    try:
        state = root / "state"
        fill = _fill(state, "bench", args.events)
        run = state / "bench"
        print(
            f"{args.events:,} events written in {fill:.1f} s; journal "
            f"{(run / 'journal.jsonl').stat().st_size / 2**20:.1f} MiB, progress database "
            f"{(run / PROGRESS_NAME).stat().st_size / 2**20:.1f} MiB\n"
        )
        print("| Store.open | median (s) | min (s) | max (s) | CPU median (s) |\n|---|---:|---:|---:|---:|")
        print(_row("read-only, from the progress database", _open_times(state, args.repeat, True, False)))
        print(_row("for writing, from the progress database", _open_times(state, args.repeat, False, False)))
        print(
            _row(
                "read-only, rebuilt from the journal",
                _open_times(state, max(1, args.repeat // 2), True, True),
            )
        )
        print(
            f"\nload average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (other work on the "
            "machine stretches the wall-clock times; CPU time is this process's own)"
        )
    finally:
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
