"""rail-cabling as `run_on: one`: one iblinkinfo sweep of the whole fabric from
one compute node, judged for every host and rail port; each port found on the
switches by the port GUID the design records for it (ib_port_guids, by PCI
address), never by node description. The wrong-rail cable lands on its host
only; if the first compute node cannot be reached, the next one runs the sweep."""

from __future__ import annotations

import dataclasses

import pytest

from runbook import parsers
from runbook.criteria.design import comparators
from runbook.sim.session import run_line
from tests.sim.conftest import design, machine_of  # noqa: F401  (the simulated nodes, no network)

from .helpers import seed_vars
from .simlab import LabRun, run_scenarios


def _judge(record, host: str, guids: dict) -> list[str]:
    v = {**seed_vars(host), "ib_port_guids": guids[host]}
    return comparators()["rail-cabling"].func(record, v)


async def _sweep(machine) -> dict:
    out, _, status = await run_line(machine, "iblinkinfo")
    assert status == 0
    return out


async def test_ports_are_found_by_guid_not_by_node_description(machine_of):
    get = machine_of(3, {"gpu02": ["wrong_rail"]})
    cluster = get("gpu01").cluster
    guids = cluster.design_port_guids()
    text = await _sweep(get("gpu01"))
    # rdma-ndd not running: every CA keeps the firmware default description, which
    # names no host at all (fixtures: saquery NodeRecord "MT4119 ConnectX5   Mellanox Technologies")
    for node in cluster.nodes.values():
        for nic in node.nics:
            text = text.replace(
                f'"{cluster.fabric.node_desc(node.name, nic.dev)}"',
                '"MT4129 ConnectX7   Mellanox Technologies"',
            )
            text = text.replace(
                f"CA: {cluster.fabric.node_desc(node.name, nic.dev)}:",
                "CA: MT4129 ConnectX7   Mellanox Technologies:",
            )
    assert "gpu0" not in text
    record = parsers.parse("iblinkinfo", text)
    assert _judge(record, "gpu01", guids) == []
    assert _judge(record, "gpu03", guids) == []
    bad = _judge(record, "gpu02", guids)
    # wrong_rail swaps the node's rail 1 and rail 2 cables: both ports named
    assert bad == [
        "rail 1 NIC 0000:18:00.0 (mlx5_0): expected on leaf01, found on leaf02 port 2",
        "rail 2 NIC 0000:20:00.0 (mlx5_1): expected on leaf02, found on leaf01 port 2",
    ]


async def test_each_sweep_is_judged_by_its_own_links(machine_of):
    # the comparator indexes a sweep's links once for all hosts: a second sweep
    # (another record, even an equal one) is judged by its own links
    get = machine_of(3, {"gpu02": ["wrong_rail"]})
    guids = get("gpu01").cluster.design_port_guids()
    record = parsers.parse("iblinkinfo", await _sweep(get("gpu01")))
    first = {h: _judge(record, h, guids) for h in ("gpu01", "gpu02")}
    assert first["gpu01"] == [] and len(first["gpu02"]) == 2
    empty = {**record, "links": []}
    assert all("not seen on any switch" in r for r in _judge(empty, "gpu01", guids))
    assert {h: _judge(dict(record), h, guids) for h in first} == first
    assert all("not seen on any switch" in r for r in _judge(empty, "gpu02", guids))
    assert {h: _judge(record, h, guids) for h in first} == first


async def test_a_dead_card_is_named_by_its_slot(machine_of):
    get = machine_of(2, {"gpu01": ["nic_dead"]})
    guids = get("gpu01").cluster.design_port_guids()  # recorded before the card died
    record = parsers.parse("iblinkinfo", await _sweep(get("gpu02")))
    assert _judge(record, "gpu02", guids) == []
    (reason,) = _judge(record, "gpu01", guids)
    assert reason.startswith("rail 2 NIC 0000:20:00.0 (mlx5_1): port GUID 0xb8599f0310000101 not seen"), (
        reason
    )


async def test_a_design_without_guids_cannot_be_judged_from_a_sweep(machine_of):
    record = parsers.parse("iblinkinfo", await _sweep(machine_of(2)("gpu01")))
    v = {**seed_vars("gpu01"), "ib_port_guids": {"0000:99:00.0": "0x1"}}
    assert all("no port GUID in the design" in r for r in comparators()["rail-cabling"].func(record, v))


async def _takeover(directory):
    run = await LabRun.start(directory, nodes=4, faults={"gpu01": ["unreachable"], "gpu03": ["wrong_rail"]})
    try:
        # rail-cabling alone (its gate, link-type-ib, is judged by the lab tests)
        await run.run(None, steps=[dataclasses.replace(run.step("rail-cabling"), needs=())])
        return run.table(), {
            h: run.finished("rail-cabling", "verify", h) for h in run.table()["rail-cabling"]
        }
    finally:
        await run.stop()


async def _compliant(directory):
    run = await LabRun.start(directory, nodes=3)
    try:
        await run.run(None, steps=[dataclasses.replace(run.step("rail-cabling"), needs=())])
        return run.table(), {
            h: run.finished("rail-cabling", "verify", h) for h in run.table()["rail-cabling"]
        }
    finally:
        await run.stop()


@pytest.fixture(scope="module")
def labs(tmp_path_factory):
    return run_scenarios(tmp_path_factory.mktemp("rail"), {"takeover": _takeover, "compliant": _compliant})


def test_the_compliant_lab_passes_from_one_sweep(labs):
    table, finished = labs["compliant"]
    assert {h: row[0] for h, row in table["rail-cabling"].items()} == {
        "gpu01": "pass",
        "gpu02": "pass",
        "gpu03": "pass",
    }
    assert {ev.via for ev in finished.values()} == {"", "gpu01"}  # run once, on gpu01
    assert sum(1 for ev in finished.values() if ev.via == "gpu01") == 2


def test_the_next_host_takes_over_and_the_fault_lands_on_its_host(labs):
    table, finished = labs["takeover"]
    status = {h: row[0] for h, row in table["rail-cabling"].items()}
    # gpu01 cannot be reached, but its cabling is seen on the switches from gpu02's sweep
    assert status == {"gpu01": "pass", "gpu02": "pass", "gpu03": "fail", "gpu04": "pass"}, table
    for host, ev in finished.items():
        assert "taken over by gpu02" in ev.reason, (host, ev.reason)
        assert ev.via in ("gpu02", "")
    assert finished["gpu03"].reason.startswith(
        "rail 1 NIC 0000:18:00.0 (mlx5_0): expected on leaf01, found on leaf02 port"
    )
