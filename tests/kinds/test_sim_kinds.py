"""The fabric acceptance steps (steps/66-fabric-acceptance.yaml) run by the real
engine over SSH against simulated labs: the compliant lab passes them all;
each new fault is caught on exactly its host (and link) by its steps; and the
issue's demo case, a marginal cable on one link plus a slow node, names
exactly that link and that host."""

from __future__ import annotations

import dataclasses

import pytest

from runbook.engine.kinds.split import bound
from tests.steps.simlab import LabRun, run_scenarios

KIND_STEPS = ("fabric-health", "link-ber", "ib-pair-bw", "ib-cross-rail-bw", "nccl-alltoall")
NODES = 8
CABLE = ("gpu03", "mlx5_2")
SLOW = "gpu06"


async def _lab(directory, faults):
    run = await LabRun.start(directory, nodes=NODES, faults=faults)
    try:
        await run.run(None)
        table = run.table()
        finished = {(s, h): run.finished(s, "verify", h) for s in KIND_STEPS for h in table.get(s, {})}
        return table, finished
    finally:
        await run.stop()


@pytest.fixture(scope="module")
def labs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("kinds")

    async def compliant(d):
        return await _lab(d, None)

    async def demo(d):
        return await _lab(d, {CABLE[0]: [{"cable_ber": CABLE[1]}], SLOW: ["slow_node"]})

    async def no_standby(d):
        run = await LabRun.start(d, nodes=2, faults={"sm02": ["sm_standby_missing"]})
        try:
            await run.run(None)
            return run.table(), {}
        finally:
            await run.stop()

    async def spine(d):
        run = await LabRun.start(d, nodes=2, faults={"sm01": [{"spine_link_down": "leaf02:spine03"}]})
        try:
            await run.run(None)
            return run.table(), {h: run.finished("leaf-spine-links", "verify", h) for h in ("gpu01",)}
        finally:
            await run.stop()

    async def ber_without_ibdiagnet(d):
        # the SM nodes without ibdiagnet: fabric-health falls back to ibqueryerrors -r
        faults = {CABLE[0]: [{"cable_ber": CABLE[1]}], "sm[01-02]": ["no_ibdiagnet"]}
        run = await LabRun.start(d, nodes=4, faults=faults)
        try:
            # only fabric-health (its gate, ib-ports-active, is judged by other tests)
            await run.run(None, steps=[dataclasses.replace(run.step("fabric-health"), needs=())])
            return run.table(), {
                h: run.finished("fabric-health", "verify", h) for h in run.table()["fabric-health"]
            }
        finally:
            await run.stop()

    return run_scenarios(
        directory,
        {
            "compliant": compliant,
            "demo": demo,
            "no_standby": no_standby,
            "spine": spine,
            "ber_without_ibdiagnet": ber_without_ibdiagnet,
        },
    )


def failing(table, step):
    return {h for h, (status, _r) in table[step].items() if status != "pass"}


def test_the_compliant_lab_passes_every_fabric_acceptance_step(labs):
    table, _ = labs["compliant"]
    for step in KIND_STEPS:
        assert len(table[step]) == NODES, step
        assert failing(table, step) == set(), (step, table[step])


def test_the_compliant_lab_has_every_uplink(labs):
    table, _ = labs["compliant"]
    # judged once, from the launcher node (nccl_launcher), SM nodes or not
    assert {h: row[0] for h, row in table["leaf-spine-links"].items()} == {"gpu01": "pass"}


def test_a_dark_uplink_is_named_and_nothing_else(labs):
    table, finished = labs["spine"]
    assert {h: row[0] for h, row in table["leaf-spine-links"].items()} == {"gpu01": "fail"}
    reason = finished["gpu01"].reason
    assert reason.startswith("leaf02 → spine03: expected 4 Active link(s), found 3")
    assert "leaf01" not in reason and "spine04" not in reason
    for step in KIND_STEPS:  # one uplink of four: a flow routes around it, no node is slow
        assert {h for h, (st, _r) in table[step].items() if st != "pass"} == set(), (step, table[step])


def test_the_marginal_cable_is_named_on_its_link_only(labs):
    table, finished = labs["demo"]
    host, dev = CABLE
    for step in ("fabric-health", "link-ber", "ib-pair-bw", "ib-cross-rail-bw"):
        assert failing(table, step) == {host}, (step, table[step])
        assert table[step][host][0] == "fail"
    # the node description as rdma-ndd sets it: the FQDN (dns_domain), attributed to gpu03;
    # both ends of the link: the leaf port's errors name gpu03 through the link table
    ev = finished[("fabric-health", host)]
    assert "gpu03.seed-dc.internal mlx5_2 port 1 SymbolErrorCounter" in ev.reason
    assert "MF0;leaf03:MQM9700/U1 port 3 SymbolErrorCounter" in ev.reason
    assert ev.via == "sm01" and "### /var/tmp/runbook-fabric-health/ibdiagnet2.db_csv" in ev.stdout
    assert table["link-ber"][host][1].startswith(
        "mlx5_2 (rail 3): effective BER 2E-12, designed ≤ 1E-12; mlx5_2 (rail 3): raw BER 3E-05"
    )
    for step in ("ib-pair-bw", "ib-cross-rail-bw"):
        ev = finished[(step, host)]
        assert ev.link == f"{host} {dev} (rail 3)" and f"the link {host} {dev}" in ev.reason


def test_the_slow_node_is_named_by_the_split(labs):
    table, finished = labs["demo"]
    assert failing(table, "nccl-alltoall") == {SLOW}
    ev = finished[("nccl-alltoall", SLOW)]
    assert ev.via == "gpu01" and "slow" in ev.reason
    assert ev.record["rounds"] <= bound(NODES)
    assert (
        ev.record["jobs"][0]["hosts"] == f"gpu[01-{NODES:02d}]" and ev.record["jobs"][0]["status"] == "fail"
    )


def test_demo_done_when_exactly_that_link_and_that_host(labs):
    table, finished = labs["demo"]
    named_links = {
        finished[(s, h)].link
        for s in KIND_STEPS
        for h in table[s]
        if table[s][h][0] == "fail" and finished[(s, h)].link and s != "fabric-health"
    }
    named_slow = {h for h in table["nccl-alltoall"] if table["nccl-alltoall"][h][0] == "fail"}
    assert named_links == {"gpu03 mlx5_2 (rail 3)"}
    assert named_slow == {SLOW}


def test_a_missing_standby_is_caught_on_the_standby_only(labs):
    table, _ = labs["no_standby"]
    assert table["opensm-active"]["sm02"][0] == "fail" and table["opensm-active"]["sm01"][0] == "pass"
    assert table["sm-master-standby"]["sm02"][0] == "blocked"
    assert table["sm-master-standby"]["sm01"][0] == "pass"
    # nothing else is blamed (the fabric steps wait for the SM steps: blocked, not failed)
    for step in KIND_STEPS:
        assert {h for h, (st, _r) in table[step].items() if st == "fail"} == set(), (step, table[step])


def test_without_ibdiagnet_the_marginal_cable_is_found_by_ibqueryerrors(labs):
    table, finished = labs["ber_without_ibdiagnet"]
    host = CABLE[0]
    assert failing(table, "fabric-health") == {host}, table["fabric-health"]
    ev = finished[host]
    assert "ibdiagnet2.db_csv" not in ev.stdout and "## Summary:" in ev.stdout  # ibqueryerrors -r ran
    assert "gpu03.seed-dc.internal mlx5_2 port 1 SymbolErrorCounter" in ev.reason
    assert "MF0;leaf03:MQM9700/U1 port 3 SymbolErrorCounter" in ev.reason  # via its Link info line
    for other in set(table["fabric-health"]) - {host}:
        assert table["fabric-health"][other][0] == "pass", (other, table["fabric-health"][other])
