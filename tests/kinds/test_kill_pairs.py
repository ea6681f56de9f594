"""SIGKILL of `runbook run` in the middle of a pair test: the server it started
stays behind on the node (a real ib_write_bw server blocked in accept() does
not notice its SSH session going away), and the resumed run stops it by its
port before testing again, finishes the step, and leaves nothing running."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time

import yaml

from runbook.definition.loader import load_runbook
from runbook.sim.lab import Lab
from tests.steps.helpers import INVENTORY, REPO, STEPS
from tests.steps.simlab import _base


def listening(lab: Lab) -> int:
    """ib_write_bw servers waiting for a client, over every simulated node."""
    return sum(
        1
        for node in lab.nodes.values()
        for f in node.machine.rendezvous.get("ib_write_bw", [])
        if not f.done()
    )


def pair_steps(directory):
    """The shipped ib-pair-bw alone (its prerequisites are other phases' business)."""
    definition = dict(load_runbook(STEPS).step("ib-pair-bw").definition)
    definition.pop("phase")
    definition.pop("needs")
    directory.mkdir()
    (directory / "10-pairs.yaml").write_text(
        yaml.safe_dump({"phase": "pairs", "title": "Pairs", "steps": [definition]}, sort_keys=False)
    )
    return directory


async def runbook(*args, steps, state, inventory):
    env = dict(os.environ, RUNBOOK_OPERATOR="tester", PYTHONPATH=str(REPO))
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "runbook",
        *args,
        "--state",
        str(state),
        "--inventory",
        str(inventory),
        "--steps",
        str(steps),
        env=env,
        cwd=REPO,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def test_sigkill_during_a_pair_test_then_resume(tmp_path):
    steps = pair_steps(tmp_path / "steps")
    scenario = tmp_path / "scenario.yaml"
    # gpu01 (the clients) answers each command after 3 s: the servers on gpu02 wait for them
    scenario.write_text(yaml.safe_dump({"faults": {"gpu01": ["slow"]}}))
    lab = await Lab.start(
        tmp_path / "lab",
        nodes=2,
        scenario=scenario,
        design=INVENTORY,
        base_address=_base(),
        port=0,
        reboot_seconds=0.2,
        slow_seconds=3.0,
        save_state=False,
    )
    state = tmp_path / "state"
    try:
        proc = await runbook("run", "--all", steps=steps, state=state, inventory=lab.inventory)
        deadline = time.monotonic() + 60
        while listening(lab) < 4 and time.monotonic() < deadline and proc.returncode is None:
            await asyncio.sleep(0.02)
        assert listening(lab) == 4, "the four rails' servers should be waiting for their clients"
        os.kill(proc.pid, signal.SIGKILL)
        await proc.wait()
        await asyncio.sleep(0.5)
        assert listening(lab) == 4  # left behind by the killed run, as on real nodes

        proc = await runbook("run", "--all", steps=steps, state=state, inventory=lab.inventory)
        out, err = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode == 0, err.decode()[-2000:]
        assert listening(lab) == 0

        proc = await runbook("status", "--json", steps=steps, state=state, inventory=lab.inventory)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        doc = json.loads(out)
        [step] = [s for s in doc["steps"] if s["id"] == "ib-pair-bw"]
        assert {h: v["status"] for h, v in step["hosts"].items()} == {"gpu01": "pass", "gpu02": "pass"}
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await lab.stop()
