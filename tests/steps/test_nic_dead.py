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

from runbook import parsers
from runbook.definition.template import render_command
from runbook.sim.session import run_line
from tests.sim.conftest import design, machine_of  # noqa: F401  (the simulated nodes, no network)

from .helpers import judge, runbook, seed_vars
from .simlab import LabRun, run_scenarios

DEAD = "0000:20:00.0"
SLOT = re.compile(r"0000:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")

# the NIC steps that find each card by its PCI address, and whether the dead card fails them
BY_SLOT = {
    "mellanox-functions": True,
    "ib-link-layer": True,
    "nic-numa-affinity": True,
    "gpu-nic-topology": True,
    "ib-ports-active": True,
    "pkey-membership": True,
    "link-type-ib": True,  # mlxconfig -d <PCI address> (ib_mode_pci)
    "irq-affinity": True,  # sysfs found through /sys/bus/pci/devices/<PCI address>/infiniband
    "ipoib-storage": False,  # the storage card is alive: its IPoIB child is untouched
}


async def _verify(machine, step_id: str) -> str:
    step = runbook().step(step_id)
    out, _, _ = await run_line(machine, render_command(step.verify.run, seed_vars("gpu01")))
    return out


@pytest.mark.parametrize("step_id", sorted(BY_SLOT))
async def test_each_nic_step_blames_the_dead_slot_only(machine_of, step_id):
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


async def test_storage_ports_are_judged_too(machine_of):
    # mlx5_6 is port 2 of the dual-port storage card: a 100G link there fails ib-ports-active
    node = machine_of(2, {"gpu01": [{"ib_rate_100": "mlx5_6"}]})("gpu01")
    verdict = judge("ib-ports-active", {"gpu01": await _verify(node, "ib-ports-active")})["gpu01"]
    assert verdict.status.value == "fail"
    assert verdict.reason == "storage NIC 0000:ac:00.1 (mlx5_6) port 1: rate 100, expected 200"


async def _lab(directory):
    # gpu02: a dead card; gpu03: one card on another firmware (design and fleet both say so)
    run = await LabRun.start(directory, nodes=4, faults={"gpu02": ["nic_dead"], "gpu03": ["hca_fw_drift"]})
    try:
        await run.run(None)
        return run.table()
    finally:
        await run.stop()


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    return run_scenarios(tmp_path_factory.mktemp("nic_dead"), {"lab": _lab})["lab"]


def test_nic_dead_and_firmware_drift_land_on_their_hosts_only(table):
    for step_id, hosts in table.items():
        for host, (status, reason) in hosts.items():
            if host == "gpu03" and step_id == "ib-ports-active":
                assert status == "fail"
                assert (
                    "storage NIC 0000:2c:00.0 (mlx5_4) port 1: firmware 20.38.1002, expected 20.39.1002"
                    in reason
                )
                assert "firmware: found 'MT4123 20.38.1002, MT4123 20.39.1002, MT4129 28.39.1002'" in reason
                continue
            if host == "gpu03" and step_id == "hca-firmware":
                # the same running firmware (node.firmware), read by mlxfwmanager against the same design
                assert status == "fail"
                assert reason == (
                    "adapter #5 (0000:2c:00.0, MCX653105A-HDA_Ax): FW expected 20.39.1002 "
                    "(ConnectX-6), found 20.38.1002"
                ), reason
                continue
            if host == "gpu03" and step_id in (
                "pkey-membership",
                "ib-write-bw",
                "fabric-health",
                "link-ber",
                "ib-pair-bw",
                "ib-cross-rail-bw",
                "nccl-alltoall",
                "nccl-inter-node",
            ):
                assert status == "blocked", (step_id, reason)  # they wait for ib-ports-active
                continue
            if host != "gpu02":  # the launches split until the slow nodes are named (docs/step-kinds.md)
                assert status == "pass", (step_id, host, reason)


def test_nic_dead_every_slot_aware_step_names_the_dead_slot(table):
    faulty = {s: hosts["gpu02"] for s, hosts in table.items() if "gpu02" in hosts}
    failed = {s for s, (status, _) in faulty.items() if status == "fail"}
    assert {
        "mellanox-functions",
        "nic-numa-affinity",
        "gpu-nic-topology",
        "link-type-ib",
        "irq-affinity",
        "hca-firmware",
    } <= failed
    for step_id in failed:
        reason = faulty[step_id][1]
        assert set(SLOT.findall(reason)) <= {DEAD}, (step_id, reason)
        assert "rail 3" not in reason, (step_id, reason)
    for step_id in ("link-type-ib", "irq-affinity", "hca-firmware"):
        assert f"rail 2 NIC {DEAD} (mlx5_1)" in faulty[step_id][1], (step_id, faulty[step_id][1])


async def test_firmware_tools_list_the_remaining_cards_and_refuse_the_dead_slot(machine_of):
    # Real mlxfwmanager lists what it finds, numbered #1..#k with no gap; flint -d on
    # an address with no device fails to open it (MFE_CR_ERROR), on the others answers.
    faulty = machine_of(2, {"gpu01": ["nic_dead"]})("gpu01")
    out, err, status = await run_line(faulty, "mlxfwmanager --query")
    assert status == 0 and not err
    names = re.findall(r"PCI Device Name:\s+(\S+)", out)
    assert names == ["0000:18:00.0", "0000:98:00.0", "0000:a0:00.0", "0000:2c:00.0", "0000:ac:00.0"]
    assert re.findall(r"^Device #(\d+):", out, re.M) == ["1", "2", "3", "4", "5"]
    out, err, status = await run_line(faulty, "flint -d 20:00.0 q")
    assert status == 1 and out == "" and "Cannot open Device: 20:00.0" in err
    out, _, status = await run_line(faulty, "flint -d 0000:98:00.0 q")
    assert status == 0 and "FW Version:            28.39.1002" in out


async def test_hca_firmware_names_the_missing_slot(machine_of):
    faulty = machine_of(2, {"gpu01": ["nic_dead"]})("gpu01")
    verdict = judge("hca-firmware", {"gpu01": await _verify(faulty, "hca-firmware")})["gpu01"]
    assert verdict.status.value == "fail"
    assert verdict.reason.startswith(f"rail 2 NIC {DEAD} (mlx5_1): not listed by mlxfwmanager"), (
        verdict.reason
    )
    assert set(SLOT.findall(verdict.reason)) == {DEAD}
    # with MST started mlxfwmanager names the adapters by /dev/mst device: no slot
    # can be read from it, the count still shows a card is gone
    out, _, _ = await run_line(faulty, "mst start > /dev/null; mlxfwmanager --query")
    assert "/dev/mst/" in out
    verdict = judge("hca-firmware", {"gpu01": out})["gpu01"]
    assert verdict.status.value == "fail"
    assert verdict.reason.startswith("mlxfwmanager lists 5 adapters, the design has 6 cards"), verdict.reason
    healthy = machine_of(2)("gpu01")
    for command in ("mlxfwmanager --query", "mst start > /dev/null; mlxfwmanager --query"):
        out, _, _ = await run_line(healthy, command)
        assert judge("hca-firmware", {"gpu01": out})["gpu01"].status.value == "pass"


async def test_link_type_rollback_restores_each_card_by_its_address(machine_of):
    # gpu01: rail 4's card left in Ethernet mode on a node whose rail-2 card is dead
    # (so rail 4 answers to mlx5_2, not its designed mlx5_3): the fix and its
    # rollback address the card at 0000:a0:00.0, whatever it is called now.
    node = machine_of(2, {"gpu01": ["nic_dead", {"link_type_eth": "mlx5_2"}]})("gpu01")
    assert (await run_line(node, "ls /sys/bus/pci/devices/0000:a0:00.0/infiniband"))[0] == "mlx5_2\n"
    step = runbook().step("link-type-ib")
    before = judge("link-type-ib", {"gpu01": await _verify(node, "link-type-ib")})["gpu01"]
    assert "rail 4 NIC 0000:a0:00.0 (mlx5_3) LINK_TYPE_P1: expected IB(1), found ETH(2)" in before.reason
    record = parsers.parse(step.verify.parse, await _verify(node, "link-type-ib"))
    assert "0000:a0:00.0:LINK_TYPE_P1=2" in record["restore"]
    query = "mst start > /dev/null; mlxconfig -d 0000:a0:00.0 q LINK_TYPE_P1"
    await run_line(node, render_command(step.apply.run, seed_vars("gpu01")))
    assert "IB(1)" in (await run_line(node, query))[0]
    await run_line(node, render_command(step.rollback.run, dict(seed_vars("gpu01"), before=record)))
    out = (await run_line(node, query))[0]
    assert "ETH(2)" in out and "IB(1)" not in out.split("Configurations:")[1]


def test_link_type_reads_the_address_as_mlxconfig_echoes_it():
    # mlxconfig repeats the -d argument as the block's "Device:" (older releases print
    # "PCI device:"), with or without the PCI domain: each is the same slot
    def block(line: str, value: str) -> str:
        return (
            f"\nDevice #1:\n----------\n\n{line}\n\nConfigurations:      Default   Current   Next Boot\n"
            f"         LINK_TYPE_P1         IB(1)    {value}    {value}\n"
        )

    v = seed_vars("gpu01")
    pcis = list(v["ib_mode_pci"])
    text = "".join(block(f"Device:         {p[5:]}", "IB(1)") for p in pcis[:3])
    text += block(f"PCI device:     {pcis[3]}", "ETH(2)")
    text += "".join(block(f"Device:         {p}", "IB(1)") for p in pcis[4:])
    text += block(f"Device:         {v['ib_mode_port2_pci'][0]}", "IB(1)").replace("_P1", "_P2")
    verdict = judge("link-type-ib", {"gpu01": text})["gpu01"]
    assert verdict.status.value == "fail"
    assert verdict.reason == "rail 4 NIC 0000:a0:00.0 (mlx5_3) LINK_TYPE_P1: expected IB(1), found ETH(2)"
