#!/usr/bin/env python3
"""Per-step breakdown of one run, read from its journal: when each step
started (seconds after the run began), how long it took, how many hosts it
ran on, the median and slowest host's command time, and the time the step
spent beyond its slowest host (scheduling, judging, storing). A pair or
launch step records one result per host when its rounds are over, so its
"beyond slowest" holds the rounds before the last one.

    python bench/step_breakdown.py STATE_DIR [--run RUN_ID] [--json]

The journal is read with the store's own reader (every line checked), so a
torn or damaged journal is reported, not guessed at.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from runbook.store.storage import JournalReader  # noqa: E402


def run_dir(state: Path, run_id: str | None) -> Path:
    if run_id:
        return state / run_id
    runs = sorted(p for p in state.iterdir() if (p / "journal.jsonl").is_file())
    if not runs:
        raise SystemExit(f"{state}: no run with a journal.jsonl in it")
    return runs[-1]


def events(journal: Path):
    for _line, batch in JournalReader(journal).batches():
        for entry in batch:
            yield entry["event"]


def breakdown(journal: Path) -> dict:
    """{"steps": [per step, in the order they started], "run_s": wall of the run}."""
    steps: dict[str, dict] = {}
    t0 = t_end = None
    for e in events(journal):
        kind = e.get("type")
        if kind == "RunStarted":
            t0 = e["time"]
        if kind == "RunFinished":
            t_end = e["time"]
        sid = e.get("step_id")
        if not sid:
            continue
        s = steps.setdefault(sid, {"step": sid, "start": None, "end": None, "cmd": []})
        when = e.get("time")
        if kind == "StepStarted" and s["start"] is None:
            s["start"] = when
        if kind == "StepFinished":
            s["end"] = when
        if kind == "HostFinished" and e.get("started") and e.get("ended"):
            s["cmd"].append(e["ended"] - e["started"])
    rows = []
    for s in steps.values():
        if s["start"] is None or s["end"] is None:
            continue
        cmd = s["cmd"] or [0.0]
        dur = s["end"] - s["start"]
        rows.append(
            {
                "step": s["step"],
                "at_s": round(s["start"] - (t0 or s["start"]), 3),
                "wall_s": round(dur, 3),
                "hosts": len(s["cmd"]),
                "cmd_median_s": round(statistics.median(cmd), 3),
                "cmd_max_s": round(max(cmd), 3),
                "beyond_slowest_s": round(max(0.0, dur - max(cmd)), 3),
            }
        )
    rows.sort(key=lambda r: r["at_s"])
    run_s = (t_end - t0) if (t0 is not None and t_end is not None) else None
    return {"steps": rows, "run_s": round(run_s, 3) if run_s is not None else None}


def table(b: dict) -> list[str]:
    L = [
        "| step | at s | wall s | hosts | command median s | slowest s | beyond slowest s |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in b["steps"]:
        L.append(
            f"| {r['step']} | {r['at_s']:.2f} | {r['wall_s']:.2f} | {r['hosts']} | {r['cmd_median_s']:.2f} "
            f"| {r['cmd_max_s']:.2f} | {r['beyond_slowest_s']:.2f} |"
        )
    total = sum(r["wall_s"] for r in b["steps"])
    slowest = sum(r["cmd_max_s"] for r in b["steps"])
    L.append(
        f"| **sum** | | {total:.2f} | | | {slowest:.2f} | {sum(r['beyond_slowest_s'] for r in b['steps']):.2f} |"
    )
    if b["run_s"] is not None:
        L.append(f"\nrun (RunStarted → RunFinished): {b['run_s']:.2f} s")
    return L


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("state", type=Path)
    ap.add_argument("--run")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    b = breakdown(run_dir(a.state, a.run) / "journal.jsonl")
    print(json.dumps(b, indent=1) if a.json else "\n".join(table(b)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
