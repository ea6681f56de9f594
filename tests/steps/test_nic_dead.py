"""A dead card renumbers the others (mlx5_N follows probe order): every step
must blame the dead card's own slot and none its neighbour.

The simulator's `nic_dead` removes the rail-2 card (0000:20:00.0, mlx5_1 when
all cards are present); the rail-3 card (0000:98:00.0) then answers to mlx5_1.
Two levels: each NIC step's own verify, run on the faulty simulated node and
judged as the engine judges it (so steps gated behind link-type-ib are judged
too), and the whole runbook through the engine on a lab (the fault lands on
its host only)."""
from __future__ import annotations

import re

import pytest

from runbook.definition.template import render_command
from runbook.sim.session import run_line
from tests.sim.conftest import design, machine_of  # noqa: F401  (the simulated nodes, no network)

from .helpers import judge, runbook, seed_vars
from .simlab import LabRun, run_scenarios

DEAD = "0000:20:00.0"
SLOT = re.compile(r"0000:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")

# the NIC steps that find each card by its PCI address, and whether the dead card fails them
BY_SLOT = {
    "mellanox-functions": True, "ib-link-layer": True, "nic-numa-affinity": True, "gpu-nic-topology": True,
    "ib-ports-active": True, "pkey-membership": True, "rail-cabling": True,
    "ipoib-storage": False,  # the storage card is alive: its IPoIB child is untouched
}
# Steps that still loop over mlx5_N names (their loops belong to other work in
# progress); they fail on the faulty host and name a device, not a slot.
BY_NAME = {"link-type-ib", "irq-affinity"}


async def _verify(machine, step_id: str) -> str:
    step = runbook().step(step_id)
    out, _, _ = await run_line(machine, render_command(step.verify.run, seed_vars("gpu01")))
    return out


@pytest.mark.parametrize("step_id", sorted(BY_SLOT))
async def test_each_nic_step_blames_the_dead_slot_only(machine_of, step_id):  # noqa: F811 (the fixture)
    faulty = machine_of(2, {"gpu01": ["nic_dead"]})("gpu01")
    healthy = machine_of(2)("gpu01")
    assert judge(step_id, {"gpu01": await _verify(healthy, step_id)})["gpu01"].status.value == "pass"
    verdict = judge(step_id, {"gpu01": await _verify(faulty, step_id)})["gpu01"]
    if not BY_SLOT[step_id]:
        assert verdict.status.value == "pass", verdict.reason
        return
    assert verdict.status.value == "fail", verdict.reason
    assert f"rail 2 NIC {DEAD} (mlx5_1)" in verdict.reason
    assert set(SLOT.findall(verdict.reason)) == {DEAD}, verdict.reason  # no neighbour named by slot
    assert "rail 3" not in verdict.reason and "mlx5_2" not in verdict.reason


async def _lab(directory):
    run = await LabRun.start(directory, nodes=3, faults={"gpu02": ["nic_dead"]})
    try:
        await run.run(None)
        return run.table()
    finally:
        await run.stop()


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    return run_scenarios(tmp_path_factory.mktemp("nic_dead"), {"lab": _lab})["lab"]


def test_nic_dead_lands_on_its_host_only(table):
    for step_id, hosts in table.items():
        for host, (status, reason) in hosts.items():
            if host != "gpu02" and step_id != "nccl-inter-node":  # one ring over every node
                assert status == "pass", (step_id, host, reason)


def test_nic_dead_every_slot_aware_step_names_the_dead_slot(table):
    faulty = {s: hosts["gpu02"] for s, hosts in table.items() if "gpu02" in hosts}
    failed = {s for s, (status, _) in faulty.items() if status == "fail"}
    assert {"mellanox-functions", "nic-numa-affinity", "gpu-nic-topology"} <= failed
    for step_id in failed - BY_NAME:
        reason = faulty[step_id][1]
        assert set(SLOT.findall(reason)) <= {DEAD}, (step_id, reason)
        assert "rail 3" not in reason, (step_id, reason)
    assert failed & BY_NAME == BY_NAME  # still by name: see BY_NAME
