"""The shipped runbook on a site whose subnet managers run on managed switches
(the simulator's --sm-on switch: leaf01 MASTER, leaf02 STANDBY, no SM node),
run over SSH by the real engine. The steps for SM nodes have no target there
(not applicable) and hold nothing back; sm-seen-from-compute judges the
switches' SMs from the launcher node and catches a missing standby there."""

from __future__ import annotations

import pytest

from runbook.definition.model import Status
from runbook.run.summary import run_summary

from .simlab import LabRun, run_scenarios

NODES = 2
SM_STEPS = {"opensm-active", "sm-master-standby", "partitions-conf"}


def _with_needs(run: LabRun, ids: set[str]) -> list[str]:
    """The steps and every step they need, in runbook order."""
    wanted = set(ids)
    while more := {n for s in run.runbook.steps if s.id in wanted for n in s.needs} - wanted:
        wanted |= more
    return [s.id for s in run.runbook.steps if s.id in wanted]


async def _switch_lab(directory, faults):
    run = await LabRun.start(directory, nodes=NODES, faults=faults, sm_on="switch")
    try:
        fabric = [s.id for s in run.runbook.steps if s.phase == "fabric"]
        ids = _with_needs(run, set(fabric) | {"fabric-health"})
        # fabric-health runs from an SM node (run_from: sm): with none, from a compute node
        steps = [run.step(i) for i in ids]
        await run.run(None, steps=steps)
        summary = run_summary(run.session.state, steps, run.session.inventory, with_exit_code=True)
        survey = run.finished("sm-seen-from-compute", "verify", "gpu01")
        return run.table(), summary, fabric, survey
    finally:
        await run.stop()


@pytest.fixture(scope="module")
def labs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("smswitch")

    async def compliant(d):
        return await _switch_lab(d, None)

    async def no_standby(d):
        return await _switch_lab(d, {"leaf02": ["sm_standby_missing"]})

    return run_scenarios(directory, {"compliant": compliant, "no_standby": no_standby})


def test_the_compliant_switch_sm_lab_passes_the_fabric_phase(labs):
    table, summary, fabric, survey = labs["compliant"]
    by_id = {s["id"]: s for s in summary["steps"]}
    for step in fabric + ["fabric-health"]:
        if step in SM_STEPS:  # no SM node: no target, shown as not applicable, never run
            assert step not in table and by_id[step]["hosts"] == {}, step
            assert by_id[step]["status"] == Status.NOT_APPLICABLE.value, step
        else:
            assert table[step] and {st for st, _r in table[step].values()} == {"pass"}, (step, table[step])
    assert set(table["ib-ports-active"]) == {"gpu01", "gpu02"}
    assert set(table["sm-seen-from-compute"]) == {"gpu01"}  # the launcher node
    # what the step saw: the two switches' SMs (the master at priority 15)
    assert "priority 15 state 3 SMINFO_MASTER" in survey.stdout
    assert "priority 14 state 2 SMINFO_STANDBY" in survey.stdout
    assert summary["status"] == "pass" and summary["exit_code"] == 0


def test_the_missing_standby_switch_sm_is_caught_on_the_launcher_node_only(labs):
    table, summary, fabric, survey = labs["no_standby"]
    assert table["sm-seen-from-compute"]["gpu01"][0] == "fail"
    assert "no STANDBY SM" in table["sm-seen-from-compute"]["gpu01"][1]
    assert "SMINFO_STANDBY" not in survey.stdout
    for step, hosts in table.items():
        if step != "sm-seen-from-compute":
            assert {st for st, _r in hosts.values()} == {"pass"}, (step, hosts)
    assert summary["exit_code"] == 1
