"""Subnet managers on managed switches (`runbook sim --sm-on switch`): no host runs
OpenSM, leaf01's SM is MASTER and leaf02's STANDBY, on the switches' port 0. What
a compute node sees (`saquery -s`, `sminfo`) is read by the runbook's own parsers
and compared in layout with the real outputs; the standby-missing fault turns
leaf02's SM off; the inventory written for such a lab has an sm group without hosts."""

from __future__ import annotations

import re

import pytest
import yaml

from runbook import parsers
from runbook.definition.lint import lint
from runbook.definition.loader import load_runbook
from runbook.errors import InputError
from runbook.inventory.load import load_inventory, select_hosts
from runbook.sim import scenario as scenarios
from runbook.sim.cluster import Cluster
from runbook.sim.design import sm_on_switches
from runbook.sim.machine import Machine
from runbook.sim.session import run_line
from tests.steps.helpers import STEPS

from .conftest import next_base
from .test_real_formats import real, shape

# the loop of the shipped step sm-seen-from-compute (steps/60-fabric.yaml)
SURVEY = (
    "d=mlx5_0; for lid in $(saquery -C $d -P 1 -s | awk -F. '/IsSMdisabled/ {exit} /EndPortLid/ {print $NF}');"
    " do sminfo -C $d -P 1 $lid; done"
)


def _machines(design, tmp_path, faults: dict | None = None, on_switch: bool = True):
    cluster = Cluster.build(sm_on_switches(design) if on_switch else design, 2)
    if faults:
        path = tmp_path / "scenario.yaml"
        path.write_text(yaml.safe_dump({"faults": faults}))
        scenarios.apply(cluster, path)
    machines: dict[str, Machine] = {}
    for name, state in cluster.nodes.items():
        machines[name] = Machine(cluster, state, peers=machines.get)
    return cluster, machines


async def _sh(machine, command: str) -> str:
    out, err, status = await run_line(machine, command, "")
    assert status == 0, err
    return out


async def test_no_host_runs_an_sm_and_saquery_lists_the_switch_ports(design, tmp_path):
    cluster, m = _machines(design, tmp_path)
    assert [n.kind for n in cluster.nodes.values()] == ["compute", "compute"]
    leaf01, leaf02 = cluster.fabric.switches["leaf01"], cluster.fabric.switches["leaf02"]
    out = await _sh(m["gpu02"], "saquery -C mlx5_3 -P 1 -s")
    r = parsers.parse("saquery", out)
    assert [(p["lid"], p["port"], p["master_sm_lid"]) for p in r["sm_ports"]] == [
        (leaf01.lid, 0, leaf01.lid),
        (leaf02.lid, 0, leaf01.lid),
    ]
    assert r["sm_disabled_ports"] == []
    # every port's SM LID is the master switch's
    assert f"SM lid: {leaf01.lid}\n" in await _sh(m["gpu01"], "ibstat mlx5_0")


async def test_sminfo_answers_for_each_switch_sm(design, tmp_path):
    cluster, m = _machines(design, tmp_path)
    fab = cluster.fabric
    survey = parsers.parse("sm-survey", await _sh(m["gpu01"], SURVEY))
    assert [(s["sm_lid"], s["state_short"], s["priority"]) for s in survey["sms"]] == [
        (fab.switches["leaf01"].lid, "MASTER", 15),
        (fab.switches["leaf02"].lid, "STANDBY", 14),
    ]
    assert int(survey["sms"][0]["sm_guid"], 16) == fab.switches["leaf01"].guid
    # a LID no SM runs on: the error line real sminfo prints (fixture OFED-README-no-SM-...)
    out, err, status = await run_line(m["gpu01"], f"sminfo -C mlx5_0 -P 1 {fab.switches['spine01'].lid}", "")
    assert status != 0 and err == real("sminfo/OFED-README-no-SM*")


async def test_the_standby_switch_sm_turned_off_is_listed_as_sm_disabled(design, tmp_path):
    cluster, m = _machines(design, tmp_path, {"leaf02": ["sm_standby_missing"]})
    assert cluster.switch_faults == {"leaf02": ["sm_standby_missing"]}
    r = parsers.parse("saquery", await _sh(m["gpu01"], "saquery -s"))
    assert [p["lid"] for p in r["sm_ports"]] == [cluster.fabric.switches["leaf01"].lid]
    assert [p["lid"] for p in r["sm_disabled_ports"]] == [cluster.fabric.switches["leaf02"].lid]
    # the step's loop stops at the IsSMdisabled heading: only the master is asked
    survey = parsers.parse("sm-survey", await _sh(m["gpu01"], SURVEY))
    assert [s["state_short"] for s in survey["sms"]] == ["MASTER"] and survey["errors"] == []
    # the subnet still has its master: every port Active
    assert "State: Active" in await _sh(m["gpu02"], "ibstat mlx5_1")


@pytest.mark.parametrize(
    "faults, on_switch, message",
    [
        (
            {"leaf01": ["sm_standby_missing"]},
            True,
            "applies to the designed standby switch (leaf02), not leaf01",
        ),
        ({"leaf02": ["sm_standby_missing"]}, False, "the SMs do not run on switches"),
        ({"leaf02": ["pcie_x8"]}, True, "pcie_x8 does not apply to a switch"),
    ],
)
def test_a_switch_fault_that_does_not_fit_is_refused_with_its_line(
    design, tmp_path, faults, on_switch, message
):
    with pytest.raises(InputError) as exc:
        _machines(design, tmp_path, faults, on_switch)
    (problem,) = exc.value.problems
    assert problem.line == 3 and message in problem.message, problem  # the fault's own line


async def test_saquery_s_has_the_real_record_layout(design, tmp_path):
    """No real `saquery -s` was published (fixtures SOURCES-2.md); its records are
    printed by the same dotted dump as the NodeRecord of the real fixture: a
    'XRecord dump:' line, then fields whose values start at the same column."""
    theirs = real("saquery/*")
    for on_switch in (True, False):
        _, m = _machines(design, tmp_path, on_switch=on_switch)
        ours = await _sh(m["gpu01"], "saquery -s")
        lines = ours.splitlines()
        # rdma-core print_issm_records: the two headings, a blank line before the second
        assert lines[0] == "IsSM ports" and lines[-1] == "IsSMdisabled ports" and lines[-2] == ""
        heads = [x for x in lines if x.endswith(" dump:")]
        assert len(heads) == 2 and all(shape(h) == shape(theirs.splitlines()[0]) for h in heads)

        def value_columns(text: str) -> set[int]:
            return {m.end() for x in text.splitlines() if (m := re.match(r"\w+\.{2,}", x))}

        fields = "\n".join(x.lstrip("\t") for x in lines if x.startswith("\t\t"))
        assert value_columns(fields) == value_columns(theirs) != set()


async def test_sminfo_of_a_switch_sm_has_the_real_layout(design, tmp_path):
    cluster, m = _machines(design, tmp_path)
    out = await _sh(m["gpu01"], f"sminfo -C mlx5_0 -P 1 {cluster.fabric.switches['leaf02'].lid}")
    assert [shape(x) for x in out.splitlines()] == [shape(real("sminfo/ibsim*").splitlines()[0])]
    assert parsers.parse("sminfo", out)["state_short"] == "STANDBY"


async def test_the_switch_lab_inventory_has_no_sm_hosts_and_lints_clean(make_lab):
    lab = await make_lab(nodes=2, sm_on="switch")
    doc = yaml.safe_load(lab.inventory.read_text())
    top = doc["all"]
    assert top["children"]["sm"]["hosts"] == {}
    assert top["vars"]["sm_runs_on"] == "switch" and top["vars"]["sm_master"] == "leaf01"
    assert int(top["vars"]["sm_master_guid"], 16) == lab.cluster.fabric.switches["leaf01"].guid
    inventory = load_inventory(lab.inventory)
    assert select_hosts(inventory, "sm") == []
    # the shipped runbook lints clean: the SM-node steps have no target, nothing more
    assert lint(load_runbook(STEPS), inventory) == []
    assert sorted(lab.nodes) == ["gpu01", "gpu02"]


async def test_the_switch_fault_survives_a_restart_from_the_saved_state(tmp_path):
    from runbook.sim.lab import Lab

    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump({"faults": {"leaf02": ["sm_standby_missing"]}}))
    kw = dict(nodes=2, scenario=scenario, base_address=next_base(), port=0, sm_on="switch")
    lab = await Lab.start(tmp_path / "lab", **kw)
    await lab.stop()
    lab = await Lab.start(tmp_path / "lab", **kw)  # from state.json, not rebuilt
    try:
        assert not lab.cluster.fabric.switch_sms["leaf02"].enabled
        assert lab.cluster.fabric.switch_sms["leaf01"].enabled
    finally:
        await lab.stop()


def test_runbook_sim_sm_on_switch_writes_a_lab_without_sm_nodes(sim_process):
    # the CLI option (`runbook sim --sm-on switch`, passed on by `runbook demo --sm-on`)
    sim = sim_process(nodes=2, extra=["--sm-on", "switch"])  # started, and stopped by the fixture
    doc = yaml.safe_load(sim.inventory.read_text())
    assert doc["all"]["children"]["sm"]["hosts"] == {} and doc["all"]["vars"]["sm_runs_on"] == "switch"
    assert sim.info["names"] == 2
