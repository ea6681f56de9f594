"""A pair whose client hangs: the client's node accepts the SSH session and never
answers (the `hang` fault), so no client ever connects. At the step's timeout
both sides are ended: the client's session is closed, the server waiting for it
on the other node is stopped by its port (the step's `cleanup:`), and neither
end is blamed for bandwidth: no measurement, so unknown (run/rules.py)."""

from __future__ import annotations

import asyncio
import json
import time

import yaml

from runbook.definition.loader import load_runbook
from runbook.sim.lab import Lab
from tests.kinds.test_kill_pairs import listening, runbook
from tests.steps.helpers import INVENTORY, STEPS
from tests.steps.simlab import _base

TIMEOUT = 4.0


def pair_steps_with_timeout(directory):
    definition = dict(load_runbook(STEPS).step("ib-pair-bw").definition)
    definition.pop("phase")
    definition.pop("needs")
    definition["verify"] = {**definition["verify"], "timeout": TIMEOUT}
    directory.mkdir()
    (directory / "10-pairs.yaml").write_text(
        yaml.safe_dump({"phase": "pairs", "title": "Pairs", "steps": [definition]}, sort_keys=False)
    )
    return directory


async def test_a_hung_client_is_ended_on_both_sides_at_the_timeout(tmp_path):
    steps = pair_steps_with_timeout(tmp_path / "steps")
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump({"faults": {"gpu01": ["hang"]}}))
    lab = await Lab.start(
        tmp_path / "lab",
        nodes=2,
        scenario=scenario,
        design=INVENTORY,
        base_address=_base(),
        port=0,
        reboot_seconds=0.2,
        save_state=False,
    )
    state = tmp_path / "state"
    proc = None
    try:
        proc = await runbook("run", "--all", steps=steps, state=state, inventory=lab.inventory)
        deadline = time.monotonic() + 60
        while listening(lab) < 4 and time.monotonic() < deadline and proc.returncode is None:
            await asyncio.sleep(0.02)
        assert listening(lab) == 4, "the servers on gpu02 should be waiting for the hung clients"
        began = time.monotonic()
        out, err = await asyncio.wait_for(proc.communicate(), 120)
        took = time.monotonic() - began
        assert listening(lab) == 0, "a server was left waiting on gpu02"
        # ended at the timeout, not after the servers' own 120 s wait for a client
        assert took < TIMEOUT + 30, took
        assert proc.returncode != 0

        proc = await runbook("status", "--json", steps=steps, state=state, inventory=lab.inventory)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        [step] = [s for s in json.loads(out)["steps"] if s["id"] == "ib-pair-bw"]
        assert {h: v["status"] for h, v in step["hosts"].items()} == {
            "gpu01": "unknown",
            "gpu02": "unknown",
        }, step["hosts"]
        assert "timeout" in json.dumps(step["hosts"])
    finally:
        if proc is not None and proc.returncode is None:
            proc.kill()
            await proc.wait()
        await lab.stop()
