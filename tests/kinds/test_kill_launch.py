"""A `launch:` job (the shipped nccl-inter-node: mpirun over the step's hosts from
the launcher) cut short, against the simulator, with `runbook run` as a child
process. The simulated mpirun runs as long as the launcher's `long_job` fault
says, held on the launcher by its session (setsid) and on each other node of
the job by its daemon, each a process of that node's table (sim/commands/jobs.py,
perf.py), so a kill, a stop and a timeout really happen in the middle of it.

- SIGKILL of the tool: the job stays (nothing could stop it, as on a real
  launcher); the resumed run ends it before its first job, finishes the step,
  and judges as a run never interrupted;
- Ctrl-C (SIGINT): the job is ended before the tool exits, the hosts are
  `interrupted` with what the stop did;
- the step's timeout: the job is ended at once, the hosts `unknown`."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time

import yaml

from runbook.definition.loader import load_runbook
from runbook.sim.lab import Lab
from tests.kinds.test_kill_pairs import runbook
from tests.steps.helpers import INVENTORY, STEPS
from tests.steps.simlab import _base

STEP = "nccl-inter-node"
LAUNCHER = "gpu01"  # nccl_launcher in the seed inventory


def running(lab: Lab) -> int:
    """Processes of a job on the simulated nodes: the launcher's job session and
    the daemons of mpirun on the other nodes of the job."""
    return sum(len(node.machine.detached) for node in lab.nodes.values())


def launch_steps(directory, timeout: float | None = None):
    """The shipped step alone (its prerequisites are other phases' business)."""
    definition = dict(load_runbook(STEPS).step(STEP).definition)
    definition.pop("phase")
    definition.pop("needs")
    if timeout is not None:
        definition["verify"] = {**definition["verify"], "timeout": timeout}
    directory.mkdir()
    (directory / "10-launch.yaml").write_text(
        yaml.safe_dump({"phase": "launch", "title": "Launch", "steps": [definition]}, sort_keys=False)
    )
    return directory


async def start_lab(tmp_path, nodes: int, faults: dict) -> Lab:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump({"faults": faults}))
    return await Lab.start(
        tmp_path / "lab",
        nodes=nodes,
        scenario=scenario,
        design=INVENTORY,
        base_address=_base(),
        port=0,
        reboot_seconds=0.2,
        save_state=False,
    )


async def wait_running(lab: Lab, count: int, proc) -> None:
    deadline = time.monotonic() + 60
    while running(lab) < count and time.monotonic() < deadline and proc.returncode is None:
        await asyncio.sleep(0.02)
    assert running(lab) == count, f"the job should run on its {count} nodes (found {running(lab)})"


async def step_hosts(steps, state, inventory) -> dict:
    proc = await runbook("status", "--json", steps=steps, state=state, inventory=inventory)
    out, err = await asyncio.wait_for(proc.communicate(), 60)  # its exit status tells the verdicts
    [step] = [s for s in json.loads(out)["steps"] if s["id"] == STEP]
    return step["hosts"]


async def finish(proc) -> tuple[int, str]:
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    return proc.returncode, err.decode()


async def test_sigkill_during_a_launch_then_resume_judges_as_an_uninterrupted_run(tmp_path):
    steps = launch_steps(tmp_path / "steps")
    # gpu03 slows every NCCL job it is in: the split has to name it, across the kill
    lab = await start_lab(tmp_path, 4, {LAUNCHER: [{"long_job": 60}], "gpu03": ["slow_node"]})
    proc = None
    try:
        state = tmp_path / "state"
        proc = await runbook("run", "--all", steps=steps, state=state, inventory=lab.inventory)
        await wait_running(lab, 4, proc)  # the first round: one job over the four nodes
        [job] = lab.nodes[LAUNCHER].machine.detached.values()
        os.kill(proc.pid, signal.SIGKILL)
        await proc.wait()
        await asyncio.sleep(0.5)
        assert running(lab) == 4, "left behind by the killed run, as on a real launcher"
        assert not job.done()

        # the rounds of the resumed run need not last a minute each: the old job still does
        lab.cluster.nodes[LAUNCHER].job_seconds = 0.0
        proc = await runbook("run", "--all", steps=steps, state=state, inventory=lab.inventory)
        code, err = await finish(proc)
        assert running(lab) == 0, "a job was left on the nodes"
        assert job.cancelled(), "the old job was not ended: it ran to its end"
        resumed = await step_hosts(steps, state, lab.inventory)

        # the same lab, a run never interrupted, for comparison
        fresh = tmp_path / "fresh"
        proc = await runbook("run", "--all", steps=steps, state=fresh, inventory=lab.inventory)
        fresh_code, fresh_err = await finish(proc)
        reference = await step_hosts(steps, fresh, lab.inventory)

        assert {h: v["status"] for h, v in reference.items()} == {
            "gpu01": "pass",
            "gpu02": "pass",
            "gpu03": "fail",
            "gpu04": "pass",
        }, fresh_err[-2000:]
        assert {h: v["status"] for h, v in resumed.items()} == {
            h: v["status"] for h, v in reference.items()
        }, err[-2000:]
        assert code == fresh_code
        # the journal says the resumed run first ended what the killed one left
        assert "ended the job in /var/tmp/runbook-launch/" in json.dumps(resumed)
        assert "ended the job" not in json.dumps(reference)
    finally:
        if proc is not None and proc.returncode is None:
            proc.kill()
            await proc.wait()
        await lab.stop()


async def test_ctrl_c_during_a_launch_ends_the_job(tmp_path):
    steps = launch_steps(tmp_path / "steps")
    lab = await start_lab(tmp_path, 2, {LAUNCHER: [{"long_job": 60}]})
    proc = None
    try:
        state = tmp_path / "state"
        proc = await runbook("run", "--all", steps=steps, state=state, inventory=lab.inventory)
        await wait_running(lab, 2, proc)
        [job] = lab.nodes[LAUNCHER].machine.detached.values()
        os.kill(proc.pid, signal.SIGINT)
        code, err = await finish(proc)
        assert code == 130, err[-2000:]
        assert running(lab) == 0, "the stopped run left its job on the nodes"
        assert job.cancelled()
        hosts = await step_hosts(steps, state, lab.inventory)
        assert {h: v["status"] for h, v in hosts.items()} == {"gpu01": "interrupted", "gpu02": "interrupted"}
        assert (
            "interrupted: the run was stopped; gpu01: ended the job in /var/tmp/runbook-launch/"
            in json.dumps(hosts)
        )

        lab.cluster.nodes[LAUNCHER].job_seconds = 0.0
        proc = await runbook("run", "--all", steps=steps, state=state, inventory=lab.inventory)
        code, err = await finish(proc)
        assert code == 0, err[-2000:]
        hosts = await step_hosts(steps, state, lab.inventory)
        assert {h: v["status"] for h, v in hosts.items()} == {"gpu01": "pass", "gpu02": "pass"}
    finally:
        if proc is not None and proc.returncode is None:
            proc.kill()
            await proc.wait()
        await lab.stop()


TIMEOUT = 4.0


async def test_a_launch_past_its_timeout_is_ended(tmp_path):
    steps = launch_steps(tmp_path / "steps", timeout=TIMEOUT)
    lab = await start_lab(tmp_path, 2, {LAUNCHER: [{"long_job": 60}]})
    proc = None
    try:
        state = tmp_path / "state"
        began = time.monotonic()
        proc = await runbook("run", "--all", steps=steps, state=state, inventory=lab.inventory)
        await wait_running(lab, 2, proc)
        [job] = lab.nodes[LAUNCHER].machine.detached.values()
        code, err = await finish(proc)
        took = time.monotonic() - began
        assert running(lab) == 0, "the timed-out job was left on the nodes"
        assert job.cancelled()
        assert took < 45, took  # ended at the timeout, not after the job's minute
        assert code != 0
        hosts = await step_hosts(steps, state, lab.inventory)
        assert {h: v["status"] for h, v in hosts.items()} == {"gpu01": "unknown", "gpu02": "unknown"}
        said = json.dumps(hosts)
        assert f"timeout after {TIMEOUT:g}s" in said and "ended the job in" in said
    finally:
        if proc is not None and proc.returncode is None:
            proc.kill()
            await proc.wait()
        await lab.stop()
