"""A stop or a rollback ends a detached job on the node (docs/long-running-steps.md),
run by the real engine over SSH against the in-process simulated lab: after it,
no job process is left on the node, the host is not `pass`, and the journal says
the job was ended. Leaving the jobs running (a quit, SIGTERM) keeps them going."""

from __future__ import annotations

import asyncio
import dataclasses
import time

from runbook.inventory.load import host_vars
from runbook.run.events import HostFinished, OperatorDecision, event_from_dict
from tests.steps.simlab import LabRun


async def _start_burn(run: LabRun, hosts: list[str]) -> asyncio.Task:
    # the burn-in alone (its gates are other steps' business); 600 s designed: it runs
    # long enough in the simulator (150 s) to be stopped
    step = dataclasses.replace(run.runbook.step("gpu-burn-in"), needs=[])
    task = asyncio.ensure_future(run.run(None, steps=[step]))
    machines = [run.lab.nodes[h].machine for h in hosts]
    for _ in range(200):
        if all(m.detached for m in machines):
            break
        await asyncio.sleep(0.1)
    assert all(m.detached for m in machines), "the burn-in never started"
    await asyncio.sleep(0.5)
    return task


async def _cancel(task: asyncio.Task) -> None:
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass


def _journal(run: LabRun) -> list:
    """The events as written to the journal on disk."""
    return [event_from_dict(e.get("event", e)) for e in run.session.store.journal()]


async def test_stop_ends_the_job_on_the_node(tmp_path):
    run = await LabRun.start(tmp_path, nodes=2, faults={"gpu02": ["no_systemd"]})
    try:
        task = await _start_burn(run, ["gpu01", "gpu02"])
        # the clock the CLI and TUI show: started now, expected the designed burn duration
        started, expected = run.session.detached_job("gpu-burn-in", "gpu01")
        designed = host_vars(run.session.inventory, "gpu01")["gpu_burn_seconds"]
        assert expected == float(designed) and 0 <= time.time() - started < 30
        await _cancel(task)  # `x` in the TUI, Ctrl-C in the CLI
        assert run.session.detached_job("gpu-burn-in", "gpu01") is None
        for host, how in (("gpu01", "systemd"), ("gpu02", "setsid")):
            machine = run.lab.nodes[host].machine
            assert not machine.detached and not machine.units, host  # no job process left
            assert run.session.state.status("gpu-burn-in", host).value == "interrupted"
            reason = run.session.state.reason("gpu-burn-in", host)
            assert "the detached job was ended on the node (stopped (" + how in reason, reason
        recorded = [
            e for e in _journal(run) if isinstance(e, HostFinished) and "ended on the node" in e.reason
        ]
        assert sorted(e.host for e in recorded) == ["gpu01", "gpu02"]
    finally:
        await run.stop()


async def test_left_running_then_rolled_back(tmp_path):
    run = await LabRun.start(tmp_path, nodes=1)
    try:
        task = await _start_burn(run, ["gpu01"])
        run.session.leave_detached_running()  # a quit or SIGTERM: the job goes on
        await _cancel(task)
        machine = run.lab.nodes["gpu01"].machine
        assert machine.detached and machine.units
        assert run.session.state.status("gpu-burn-in", "gpu01").value == "interrupted"
        run.session.engine.leave_detached_running = False  # a new piece of work in the same session
        step = dataclasses.replace(run.runbook.step("gpu-burn-in"), needs=[])
        await run.run(None, action="rollback", steps=[step])
        assert not machine.detached and not machine.units
        assert run.session.state.status("gpu-burn-in", "gpu01").value == "interrupted"
        assert "rolled back: the detached job was ended on the node" in run.session.state.reason(
            "gpu-burn-in", "gpu01"
        )
        decisions = [e for e in _journal(run) if isinstance(e, OperatorDecision)]
        assert decisions[-1].kind == "approve" and "end the detached job" in decisions[-1].reason
        # nothing left to end: a second rollback asks nothing and records nothing
        asked = []

        async def confirm(*a):
            asked.append(a)
            return True

        await run.session.execute([step], "rollback", confirm=confirm)
        assert not asked
    finally:
        await run.stop()
