"""Benchmarks other engineers own (bench/store_bench.py: the store,
bench/tui_latency.py: the UI), called as they are, never duplicated.

Each is run with its own options (below), in its own process; the JSON it
writes and what it prints go into the results as they are.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from measure import run_measured

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def call(script: str, args: list[str], out: Path, timeout: float = 900) -> dict:
    """Run bench/SCRIPT with ARGS (which should make it write OUT); keep its JSON and what it printed."""
    path = HERE / script
    if not path.exists():
        return {"present": False, "note": f"bench/{script} is not there yet: not run"}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    r = run_measured([sys.executable, str(path), *args], cwd=str(REPO), timeout=timeout, settle=0)
    doc = None
    if out.exists():
        try:
            doc = json.loads(out.read_text())
        except ValueError:
            doc = None
    return {
        "present": True,
        "argv": [f"bench/{script}", *args],
        "rc": r.rc,
        "wall": round(r.wall, 2),
        "cpu": round(r.cpu, 2),
        "result": doc,
        "stdout": r.stdout[-8000:],
        "stderr_tail": r.stderr[-1500:] if r.rc else "",
    }


def store(work: Path, quick: bool) -> dict:
    """bench/store_bench.py: runs of 1k, 10k and 100k events (quick: 1k and 10k; building
    the 100k-event run alone takes ~40 s here)."""
    out = work / "store.json"
    sizes = "1000,10000" if quick else "1000,10000,100000"
    return call("store_bench.py", ["--sizes", sizes, "-o", str(out)], out)


def tui(work: Path, quick: bool) -> dict:
    """bench/tui_latency.py: 1,000 hosts; fewer key presses in quick mode."""
    out = work / "tui_latency.json"
    # quick: no 60-step memory run (3 minutes at 1,000 hosts)
    quick_args = ["--nodes", "384", "--samples", "100", "--memory-steps", "0"]
    args = ["--out", str(out)] + (quick_args if quick else [])
    return call("tui_latency.py", args, out)
