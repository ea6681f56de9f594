"""The whole shipped runbook, verify only (`runbook run --all --new-run --json`),
on a running lab: wall time, CPU (process + children), peak RSS, and what it
found (host verdicts per status, steps per status)."""

from __future__ import annotations

import sys
from pathlib import Path

from lab import STEPS, Lab
from measure import ServerCPU, last_json, median, run_measured, set_aside
from step_breakdown import breakdown, run_dir

TIMEOUT = 1800  # s; a run past it is killed and reported as timed out


def argv_all(lab: Lab, state: Path, *, json: bool = True) -> list[str]:
    return [
        sys.executable,
        "-m",
        "runbook",
        "run",
        "--steps",
        str(STEPS),
        "--inventory",
        str(lab.inventory),
        "--state",
        str(state),
        "--all",
        "--new-run",
    ] + (["--json"] if json else [])


def verdict_counts(doc: dict) -> tuple[dict, dict]:
    hosts: dict[str, int] = {}
    steps: dict[str, int] = {}
    for s in doc.get("steps", []):
        steps[s["status"]] = steps.get(s["status"], 0) + 1
        for h in s.get("hosts", {}).values():
            hosts[h["status"]] = hosts.get(h["status"], 0) + 1
    return hosts, steps


def run(lab: Lab, reps: int, work: Path, log=print) -> dict:
    server = ServerCPU(lab.pids())
    runs = []
    for rep in range(reps):
        state = work / f"full{lab.nodes}-{rep}"
        r = run_measured(argv_all(lab, state), server=server, timeout=TIMEOUT)
        doc = last_json(r.stdout)
        hosts, steps = verdict_counts(doc)
        state_mb = (
            sum(f.stat().st_size for f in state.rglob("*") if f.is_file()) / 2**20 if state.exists() else 0
        )
        rec = {
            "n": lab.nodes,
            "rep": rep,
            "process": r.record(),
            "host_verdicts": hosts,
            "state_mb": round(state_mb, 1),
            "step_statuses": steps,
            "steps": len(doc.get("steps", [])),
        }
        if not doc:
            rec["stderr_tail"] = r.stderr[-1500:]
        if state.exists():
            rec["breakdown"] = breakdown(run_dir(state, None) / "journal.jsonl")
        runs.append(rec)
        set_aside(state, work)
        log(
            f"  full runbook N={lab.nodes} rep{rep}: wall {r.wall:.2f}s cpu {r.cpu:.2f}s "
            f"rss {r.maxrss_mb:.0f} MB state {state_mb:.0f} MB rc {r.rc} steps {rec['steps']} hosts {hosts}"
        )
    return {
        "n": lab.nodes,
        "runs": runs,
        "wall": median([r["process"]["wall"] for r in runs]),
        "cpu": median([r["process"]["cpu"] for r in runs]),
        "maxrss_mb": max(r["process"]["maxrss_mb"] for r in runs),
        "server_cpu": median([r["process"]["server_cpu"] for r in runs]),
        "steps": runs[-1]["steps"],
        "state_mb": runs[-1]["state_mb"],
        "timed_out": runs[-1]["process"]["timed_out"],
        "host_verdicts": runs[-1]["host_verdicts"],
        "step_statuses": runs[-1]["step_statuses"],
        "breakdown": runs[-1].get("breakdown"),
        "rc": runs[-1]["process"]["rc"],
    }
