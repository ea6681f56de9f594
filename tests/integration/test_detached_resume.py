"""A long-running step survives the tool (docs/long-running-steps.md): kill
`runbook run` with SIGKILL while gpu-burn-in's job runs on the node, resume,
and the step gets the job's real result, while the node started gpu_burn once."""

import json
import os
import signal
import subprocess
import sys
import time

from runbook.sim.procs import SimProcess, random_base

from .conftest import REPO, runbook_cli

SCENARIO = "faults:\n  gpu02: [gpu_burn_faulty]\n"
BURN_SECONDS = 48  # the simulator burns 4 nominal seconds per second: about 12 s here


def burn_runs(lab_dir) -> dict[str, int]:
    try:
        doc = json.loads((lab_dir / "state.json").read_text())
    except (OSError, ValueError):
        return {}
    return {n["name"]: n["platform"]["burn_runs"] for n in doc["nodes"] if n["kind"] == "compute"}


def test_killed_during_burn_in_then_resumed_reads_the_jobs_result(tmp_path):
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(SCENARIO)
    with SimProcess(
        tmp_path / "lab",
        nodes=2,
        scenario=scenario,
        base_address=random_base(),
        port=0,
        lifetime=300,
        reboot_seconds=0.5,
    ) as lab:
        inv = tmp_path / "inventory.yaml"  # the lab's inventory with a longer burn-in
        text = lab.inventory.read_text()
        assert "gpu_burn_seconds: 4\n" in text
        inv.write_text(text.replace("gpu_burn_seconds: 4\n", f"gpu_burn_seconds: {BURN_SECONDS}\n"))
        state = tmp_path / "state"
        runbook_cli(
            "run",
            "--step",
            "nvidia-driver-version",
            "--step",
            "gpu-ecc-health",
            "--step",
            "gpu-persistence-power",
            state=state,
            inventory=inv,
            check_rc=0,
        )

        env = dict(os.environ, RUNBOOK_OPERATOR="tester", PYTHONPATH=str(REPO))
        cmd = [
            sys.executable,
            "-m",
            "runbook",
            "run",
            "--step",
            "gpu-burn-in",
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
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 30
            while burn_runs(lab.dir) != {"gpu01": 1, "gpu02": 1} and time.monotonic() < deadline:
                time.sleep(0.2)
            assert burn_runs(lab.dir) == {"gpu01": 1, "gpu02": 1}, "the burn-in never started"
            time.sleep(1.0)
            assert proc.poll() is None, "runbook finished before it could be killed"
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()

        resumed = runbook_cli(
            "run", "--resume", "--step", "gpu-burn-in", "--json", state=state, inventory=inv
        )
        assert "interrupted in gpu-burn-in" in resumed.stderr, resumed.stderr[-2000:]
        doc = json.loads(runbook_cli("status", "--json", state=state, inventory=inv).stdout)
        burn = next(s for s in doc["steps"] if s["id"] == "gpu-burn-in")
        assert burn["hosts"]["gpu01"]["status"] == "pass", burn["hosts"]["gpu01"]
        assert burn["hosts"]["gpu02"]["status"] == "fail"  # the job's real verdict: GPU 4 FAULTY
        assert "GPU 4: FAULTY" in burn["hosts"]["gpu02"].get("reason", "")
    # after the lab saved its final state: the resume re-attached, nothing burned twice
    assert burn_runs(tmp_path / "lab") == {"gpu01": 1, "gpu02": 1}
