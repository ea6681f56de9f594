"""Crash-resume: `runbook run --all` killed with SIGKILL at a random moment,
then resumed (`runbook run --resume`) on the same state; the verdicts that
`runbook status --json` reports afterwards must equal those of an
uninterrupted run, every time.

Per trial: a fresh state directory, the run started, SIGKILL after a random
delay drawn uniformly from [5%, 95%] of the uninterrupted run's wall time
(seeded, so a run of the bench is repeatable), then the resume, timed, then
`runbook status --json`. A trial whose run finished before its kill is
reported as such (it proves nothing about crashes).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from full_runbook import argv_all
from lab import STEPS, Lab
from measure import last_json, median, run_measured


def verdicts(lab: Lab, state: Path) -> tuple[dict, int, str, float]:
    """{step: {host: status}} from `runbook status --json`, its exit code, stderr, wall time."""
    r = run_measured(
        [
            sys.executable,
            "-m",
            "runbook",
            "status",
            "--steps",
            str(STEPS),
            "--inventory",
            str(lab.inventory),
            "--state",
            str(state),
            "--json",
        ],
        timeout=300,
        settle=0,
    )
    doc = last_json(r.stdout)
    return (
        {s["id"]: {h: v["status"] for h, v in s.get("hosts", {}).items()} for s in doc.get("steps", [])},
        r.rc,
        r.stderr[-600:],
        r.wall,
    )


def differences(a: dict, b: dict) -> list[str]:
    out = []
    for step in sorted(set(a) | set(b)):
        ha, hb = a.get(step, {}), b.get(step, {})
        for h in sorted(set(ha) | set(hb)):
            if ha.get(h) != hb.get(h):
                out.append(f"{step}/{h}: {ha.get(h)} != {hb.get(h)}")
    return out


def kill_at(argv: list[str], delay: float) -> tuple[bool, float]:
    """Start argv, SIGKILL its process group after `delay` s; (killed, elapsed)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(
        argv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        p.wait(timeout=delay)
        return False, time.perf_counter() - t0  # finished first
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)  # the group this trial started, nothing else
        p.wait()
        return True, time.perf_counter() - t0


def run(lab: Lab, trials: int, work: Path, seed: int = 1, log=print) -> dict:
    rng = random.Random(seed)
    ref_state = work / "crash-reference"
    ref = run_measured(argv_all(lab, ref_state, json=False), timeout=900)
    reference, ref_rc, ref_err, _ = verdicts(lab, ref_state)
    log(
        f"  crash-resume N={lab.nodes}: uninterrupted run {ref.wall:.2f}s rc {ref.rc}, "
        f"{sum(len(v) for v in reference.values())} verdicts"
    )
    if not reference:
        return {
            "n": lab.nodes,
            "error": f"reference run gave no verdicts (rc {ref.rc}/{ref_rc}): {ref.stderr[-800:]} {ref_err}",
        }
    out = []
    for i in range(trials):
        state = work / f"crash-{i}"
        delay = rng.uniform(0.05, 0.95) * ref.wall
        killed, at = kill_at(argv_all(lab, state, json=False), delay)
        res = run_measured(
            [
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
                "--resume",
            ],
            timeout=900,
            settle=0,
        )
        got, rc, err, status_wall = verdicts(lab, state)
        diff = differences(reference, got)
        rec = {
            "trial": i,
            "kill_after_s": round(at, 3),
            "killed": killed,
            "resume_wall": round(res.wall, 3),
            "resume_cpu": round(res.cpu, 3),
            "resume_rc": res.rc,
            "status_rc": rc,
            "status_wall": round(status_wall, 3),
            "equal": not diff,
            "differences": diff[:5],
        }
        if diff or rc not in (0, 1, 3):
            rec["resume_stderr"] = res.stderr[-600:]
            rec["status_stderr"] = err
        out.append(rec)
        shutil.rmtree(state, ignore_errors=True)
        log(
            f"  trial {i}: kill at {at:.2f}s ({'killed' if killed else 'had finished'}), resume "
            f"{res.wall:.2f}s rc {res.rc}, verdicts {'equal' if not diff else f'DIFFER ({len(diff)})'}"
        )
    shutil.rmtree(ref_state, ignore_errors=True)
    killed = [t for t in out if t["killed"]]
    return {
        "n": lab.nodes,
        "trials": len(out),
        "killed": len(killed),
        "equal": sum(t["equal"] for t in out),
        "equal_killed": sum(t["equal"] for t in killed),
        "reference_wall": round(ref.wall, 3),
        "reference_rc": ref.rc,
        "resume_wall_median": median([t["resume_wall"] for t in killed]),
        "resume_wall_max": max((t["resume_wall"] for t in killed), default=None),
        "status_wall_median": median([t["status_wall"] for t in out]),
        "trial_records": out,
    }
