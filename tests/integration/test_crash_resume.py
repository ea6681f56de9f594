"""Kill `runbook run --all` with SIGKILL at random moments, many times, and
resume each time: the store always opens with its hash chain intact, nothing
that had been reported as done is missing, and the final verdicts equal those
of an uninterrupted run."""

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from runbook.sim.procs import SimProcess, random_base
from runbook.store.store import Store

from .conftest import REPO, runbook_cli

SCENARIO = """\
faults:
  gpu02: [link_type_eth]
  gpu03: [unreachable]
  gpu04: [ofed_version_drift]
"""
KILLS = int(os.environ.get("RUNBOOK_CRASH_KILLS", "24"))


def verdicts(state, inv):
    doc = json.loads(runbook_cli("status", "--json", state=state, inventory=inv).stdout)
    return {(s["id"], h): v["status"] for s in doc["steps"] for h, v in s["hosts"].items()}


def reported_steps(stderr: str) -> list[tuple[str, str]]:
    """Step lines the killed process printed (it prints only what is on disk)."""
    out = []
    for line in stderr.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "verify" and parts[2] in ("pass", "fail", "unknown", "blocked"):
            out.append((parts[0], parts[2]))
    return out


@pytest.mark.slow
def test_sigkill_at_random_moments_then_resume(tmp_path):
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(SCENARIO)
    rng = random.Random(int(os.environ.get("RUNBOOK_CRASH_SEED", time.time())))
    with SimProcess(
        tmp_path / "lab",
        nodes=6,
        scenario=scenario,
        base_address=random_base(),
        port=0,
        lifetime=600,
        reboot_seconds=0.5,
        slow_seconds=2,
    ) as lab:
        inv = lab.inventory
        clean = tmp_path / "clean"
        runbook_cli("run", "--all", state=clean, inventory=inv)
        expected = verdicts(clean, inv)
        assert (
            expected[("link-type-ib", "gpu02")] == "fail"
            and expected[("ssh-reachable", "gpu03")] == "unknown"
        )

        env = dict(os.environ, RUNBOOK_OPERATOR="tester", PYTHONPATH=str(REPO))
        kills, chains, completed = 0, 0, 0
        state = tmp_path / f"crashed{chains}"
        # Kill, resume, kill... When a chain of resumes completes (a fast machine), its
        # verdicts are checked and a fresh chain starts, so the test always gets its kills.
        while kills < KILLS:
            cmd = [
                sys.executable,
                "-m",
                "runbook",
                "run",
                "--all",
                "--state",
                str(state),
                "--inventory",
                str(inv),
                "--steps",
                str(REPO / "steps"),
            ]
            proc = subprocess.Popen(
                cmd,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                cwd=REPO,
                stdin=subprocess.DEVNULL,
            )
            try:
                proc.wait(timeout=rng.uniform(0.4, 2.5))
                proc.stderr.read()
                proc.stderr.close()
                assert verdicts(state, inv) == expected, f"chain {chains} completed with other verdicts"
                completed += 1
                chains += 1
                state = tmp_path / f"crashed{chains}"
                continue
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
                kills += 1
            printed = reported_steps(proc.stderr.read())
            proc.stderr.close()
            if not state.exists() or not list(state.glob("2*")):
                continue  # killed before it created the run
            store = Store.open(state, read_only=True)
            try:
                store.verify_chain()
                have = {
                    (r["step_id"], r["host"])
                    for r in store.results(outputs=False).values()
                    if r["status"] not in ("running", "interrupted")
                }
            finally:
                store.close()
            for step_id, _status in printed:
                assert any(s == step_id for s, _h in have), (
                    f"{step_id} was reported done but is not in the store"
                )
        final = runbook_cli("run", "--all", state=state, inventory=inv)
        assert final.returncode in (1, 3), final.stderr[-2000:]
        assert verdicts(state, inv) == expected
