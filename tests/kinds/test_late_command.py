"""A command whose SSH client went away while the node was still slow to set
the session up is never started (as with a real sshd). Otherwise a killed
run's late pair client would connect to the next run's server and take it
away from the resumed run's own client (tests/kinds/test_kill_pairs.py)."""

from __future__ import annotations

import asyncio

import yaml

from runbook.sim.lab import Lab
from tests.sim.conftest import connect_node
from tests.steps.helpers import INVENTORY
from tests.steps.simlab import _base

SLOW = 0.6


async def _connect(lab: Lab, name: str):
    return await connect_node(lab, name)


async def test_a_command_whose_client_left_during_a_slow_start_never_runs(tmp_path):
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump({"faults": {"gpu01": ["slow"]}}))
    lab = await Lab.start(
        tmp_path / "lab",
        nodes=2,
        scenario=scenario,
        design=INVENTORY,
        base_address=_base(),
        port=0,
        slow_seconds=SLOW,
        save_state=False,
    )
    try:
        node = lab.node("gpu01")
        conn = await _connect(lab, "gpu01")
        await conn.create_process("touch /tmp/late")
        await asyncio.sleep(SLOW / 4)
        conn.abort()  # the client is killed while the node is still slow to answer
        await asyncio.sleep(SLOW * 2)
        _out, _err, code = await node.run("test -e /tmp/late")
        assert code == 1, "the command ran although nobody was there any more"

        async with await _connect(lab, "gpu01") as conn:  # a client that stays gets it run
            result = await conn.run("touch /tmp/late")
            assert result.exit_status == 0
        _out, _err, code = await node.run("test -e /tmp/late")
        assert code == 0
    finally:
        await lab.stop()
