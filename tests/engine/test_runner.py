import asyncio

import pytest

from runbook.definition.model import Status
from runbook.definition.targets import ordered
from runbook.engine.runner import Engine
from runbook.run.events import HostFinished, OperatorDecision, PendingActionChanged, StepFinished
from runbook.run.state import RunState

from .fakes import FakeHost, FakeTransport, load_world

STEPS = """\
phase: p
title: P
steps:
  - id: link
    title: link type
    why: w
    hosts: compute
    verify:
      run: query-link
      expect:
        - {contains: "IB(1)"}
    apply:
      run: set-link IB(1)
      then: reboot
    rollback:
      run: "set-link {{ before.link }}"
  - id: version
    title: version consistent
    why: w
    hosts: compute
    needs: [link]
    verify:
      run: version
      expect:
        - {consistent: stdout}
"""

INVENTORY = """\
all:
  children:
    compute:
      hosts:
        n[1:5]:
"""


@pytest.fixture
def world(tmp_path):
    rb, inv = load_world(tmp_path, STEPS, INVENTORY)
    hosts = {h: FakeHost() for h in inv.hosts}
    return rb, inv, hosts


async def drive(engine, steps, action="verify", confirm=None, **kw):
    events = []
    async for batch in engine.run(steps, action, confirm=confirm, **kw):
        events.extend(batch)
    return events


async def yes(step, action, hosts, commands):
    return True


async def no(step, action, hosts, commands):
    return False


async def test_verify_gating_and_consistency(world):
    rb, inv, hosts = world
    hosts["n2"].link = "ETH(2)"
    hosts["n3"].version = "5.8"
    hosts["n5"].reachable = False
    state = RunState()
    engine = Engine(rb, inv, FakeTransport(hosts), state)
    events = await drive(engine, ordered(rb))
    st = lambda s, h: state.status(s, h)
    assert st("link", "n1") == Status.PASS and st("link", "n2") == Status.FAIL
    assert st("link", "n5") == Status.UNKNOWN and "unreachable" in state.reason("link", "n5")
    # needs is per host: n2 failed link, n5 unknown -> blocked, never run
    assert st("version", "n2") == Status.BLOCKED and "needs link" in state.reason("version", "n2")
    assert st("version", "n5") == Status.BLOCKED
    assert not any(c.startswith("version") for c in hosts["n2"].log)
    # consistency among the assessed hosts: n3 is the outlier
    assert st("version", "n3") == Status.FAIL
    assert "fleet majority '23.10'" in state.reason("version", "n3") and "outliers n3" in state.reason(
        "version", "n3"
    )
    assert st("version", "n1") == Status.PASS
    finished = [e for e in events if isinstance(e, StepFinished) and e.step_id == "link"]
    assert finished[-1].failing == "n2" and finished[-1].unknown == "n5"


async def test_apply_only_on_failures_then_reboot_and_reverify_then_rollback(world):
    rb, inv, hosts = world
    hosts["n2"].link = "ETH(2)"
    state = RunState()
    engine = Engine(rb, inv, FakeTransport(hosts), state)
    link = [rb.step("link")]
    events = await drive(engine, link, "apply", confirm=yes)
    assert [h for h, fh in hosts.items() if any(c.startswith("set-link") for c in fh.log)] == ["n2"]
    assert hosts["n2"].reboots == 1 and hosts["n1"].reboots == 0
    assert state.status("link", "n2") == Status.PASS  # re-verified after the reboot
    owed = [e for e in events if isinstance(e, PendingActionChanged)]
    assert [(e.host, e.state) for e in owed] == [("n2", "owed"), ("n2", "done")]
    assert not state.pending
    applied = [e for e in events if isinstance(e, HostFinished) and e.action == "apply"]
    assert applied[0].before is not None  # what verify measured, kept for rollback
    assert any(isinstance(e, OperatorDecision) and e.kind == "approve" for e in events)
    # the rollback restores what verify found before (ETH), through the recorded value
    state.befores[("link", "n2")] = {"link": "ETH(2)"}
    await drive(engine, link, "rollback", confirm=yes)
    assert hosts["n2"].log[-1] == "set-link 'ETH(2)'"
    assert state.status("link", "n2") == Status.ROLLED_BACK


async def test_declined_apply_changes_nothing(world):
    rb, inv, hosts = world
    hosts["n2"].link = "ETH(2)"
    state = RunState()
    engine = Engine(rb, inv, FakeTransport(hosts), state)
    events = await drive(engine, [rb.step("link")], "apply", confirm=no)
    assert not any(c.startswith("set-link") for c in hosts["n2"].log)
    assert state.status("link", "n2") == Status.FAIL
    assert any(isinstance(e, OperatorDecision) and e.kind == "decline" for e in events)


async def test_resume_skips_passed_hosts_and_rerun_failed(world):
    rb, inv, hosts = world
    hosts["n2"].link = "ETH(2)"
    state = RunState()
    engine = Engine(rb, inv, FakeTransport(hosts), state)
    await drive(engine, [rb.step("link")])
    for h in hosts.values():
        h.log.clear()
    await drive(engine, [rb.step("link")])
    assert [h for h, fh in hosts.items() if fh.log] == ["n2"]  # passed hosts not re-run
    hosts["n2"].log.clear()
    await drive(engine, [rb.step("link")], again=True)
    assert all(fh.log for fh in hosts.values())


async def test_waiver_and_skip_change_effective_status(world):
    rb, inv, hosts = world
    hosts["n2"].link = "ETH(2)"
    state = RunState()
    engine = Engine(rb, inv, FakeTransport(hosts), state)
    await drive(engine, [rb.step("link")])
    state.apply(OperatorDecision("waive", "link", "n2", "alice", "spare node, customer accepts"))
    assert state.status("link", "n2") == Status.WAIVED
    assert state.reason("link", "n2").startswith("waive by alice: spare node")
    state.apply(OperatorDecision("skip", "link", "n3", "alice", "not racked"))
    assert state.status("link", "n3") == Status.SKIPPED


async def test_cancel_marks_in_flight_hosts_interrupted(world):
    rb, inv, hosts = world
    hosts["n4"].delay = 30
    state = RunState()
    engine = Engine(rb, inv, FakeTransport(hosts), state)
    events = []

    async def consume():
        async for batch in engine.run([rb.step("link")]):
            events.extend(batch)

    task = asyncio.create_task(consume())
    for _ in range(100):
        await asyncio.sleep(0.01)
        if state.status("link", "n1") == Status.PASS:
            break
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # the interruptions reach the state once the consumer takes them (engine.drain)
    assert state.status("link", "n4") == Status.RUNNING
    events += engine.drain()
    assert state.status("link", "n4") == Status.INTERRUPTED
    assert state.status("link", "n1") == Status.PASS
