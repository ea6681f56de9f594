"""Ready verifies of one host share a round trip (runbook/engine/batchrun.py):
which steps go together (needs met, plain per-host verifies only), that each
still gets its own HostStarted/HostFinished, and that the verdicts and results
are those of one channel per step. The transport double runs each command of a
batch as `run` would; the real channel is tested in tests/transport."""

import asyncio

import pytest

from runbook.definition.model import Status
from runbook.definition.targets import ordered
from runbook.engine.batchrun import batching_enabled
from runbook.engine.runner import Engine
from runbook.run.events import HostFinished, HostStarted, StepStarted
from runbook.run.state import RunState

from .fakes import FakeHost, FakeTransport, load_world

STEPS = """\
phase: p
title: P
steps:
  - id: a
    title: a
    why: w
    hosts: compute
    verify:
      run: version a
      expect:
        - {contains: "23"}
  - id: b
    title: b
    why: w
    hosts: compute
    verify: {run: version b}
  - id: fleet
    title: fleet
    why: w
    hosts: compute
    verify:
      run: version f
      expect:
        - {consistent: stdout}
  - id: c
    title: c
    why: w
    hosts: compute
    needs: [a]
    verify: {run: version c}
  - id: d
    title: d
    why: w
    hosts: compute
    verify: {run: fail d}
  - id: x
    title: x
    why: w
    hosts: compute
    exclusive: true
    verify: {run: version x}
  - id: e
    title: e
    why: w
    hosts: compute
    needs: [c]
    verify: {run: version e}
  - id: g
    title: g
    why: w
    hosts: compute
    verify: {run: version g}
"""

INVENTORY = """\
all:
  children:
    compute:
      hosts:
        n[1:3]:
"""


class BatchingFake(FakeTransport):
    """run_many as the real transport reports it: each command started, then its
    result, in order; the groups it was given are kept."""

    def __init__(self, hosts):
        super().__init__(hosts)
        self.groups: list[tuple[str, list[str]]] = []

    async def run_many(self, host, commands, *, on_start, on_result, on_line_for=None, retries=0):
        self.groups.append((host, [c for c, _ in commands]))
        for i, (command, timeout) in enumerate(commands):
            on_start(i)
            on_result(i, await self.run(host, command, timeout=timeout, retries=retries))


async def verify(rb, inv, hosts, **kw):
    state = RunState()
    t = BatchingFake(hosts)
    engine = Engine(rb, inv, t, state, **kw)
    events = []
    async for batch in engine.run(ordered(rb), "verify"):
        events.extend(batch)
    return state, events, t


def results(events):
    return {
        (e.step_id, e.host): (e.status, e.reason, e.exit_status, e.stdout, e.command)
        for e in events
        if isinstance(e, HostFinished)
    }


@pytest.fixture
def world(tmp_path):
    return load_world(tmp_path, STEPS, INVENTORY)


async def test_ready_steps_of_a_host_share_one_round_trip(world):
    rb, inv = world
    hosts = {h: FakeHost() for h in inv.hosts}
    state, events, t = await verify(rb, inv, hosts, batch_verifies=True)
    groups = sorted(cmds for host, cmds in t.groups if host == "n1")
    # a, b, fleet are ready together; c needs a (in flight): the next round trip,
    # with d; x is exclusive (alone, not through run_many); e (its need c is in) and g
    # after it
    assert groups == [
        ["version a", "version b", "version f"],
        ["version c", "fail d"],
        ["version e", "version g"],
    ]
    assert sum(1 for c in hosts["n1"].log if c.startswith("version x")) == 1
    for step in ("a", "b", "fleet", "c", "d", "e", "g"):
        for host in inv.hosts:
            started = [
                i
                for i, e in enumerate(events)
                if isinstance(e, HostStarted) and (e.step_id, e.host) == (step, host)
            ]
            finished = [
                i
                for i, e in enumerate(events)
                if isinstance(e, HostFinished) and (e.step_id, e.host) == (step, host)
            ]
            opened = [i for i, e in enumerate(events) if isinstance(e, StepStarted) and e.step_id == step]
            assert len(started) == len(finished) == len(opened) == 1
            assert opened[0] < started[0] < finished[0]


async def test_same_verdicts_and_results_as_one_channel_per_step(world):
    rb, inv = world

    def lab():
        hosts = {h: FakeHost() for h in inv.hosts}
        hosts["n2"].version = "5.8"  # fails a, so c and e are blocked on n2
        hosts["n3"].version = "23.04"  # an outlier of the fleet check
        return hosts

    on_state, on_events, on_t = await verify(rb, inv, lab(), batch_verifies=True)
    off_state, off_events, off_t = await verify(rb, inv, lab(), batch_verifies=False)
    assert results(on_events) == results(off_events)
    assert off_t.groups == [] and on_t.groups
    for step in rb.steps:
        for host in inv.hosts:
            assert on_state.status(step.id, host) == off_state.status(step.id, host)
            assert on_state.reason(step.id, host) == off_state.reason(step.id, host)


async def test_a_blocked_step_is_left_out_of_the_round_trip(tmp_path):
    steps = STEPS.replace(
        "needs: [a]\n    verify: {run: version c}", "needs: [d]\n    verify: {run: version c}"
    )
    rb, inv = load_world(tmp_path, steps, INVENTORY)
    hosts = {h: FakeHost() for h in inv.hosts}
    state, events, t = await verify(rb, inv, hosts, batch_verifies=True)
    assert all("version c" not in cmds for _, cmds in t.groups)
    assert all(state.status("c", h).value == "blocked" for h in inv.hosts)


def test_the_switch():
    assert batching_enabled({}) is True
    for off in ("0", "off", "no", "false", " OFF "):
        assert batching_enabled({"RUNBOOK_BATCH_VERIFY": off}) is False
    assert batching_enabled({"RUNBOOK_BATCH_VERIFY": "1"}) is True


async def test_stopped_mid_round_trip_then_resumed_reaches_the_same_verdicts(world):
    rb, inv = world
    hosts = {h: FakeHost() for h in inv.hosts}
    hosts["n2"].slow = {"version b": 30}  # n2 is in b, the second command of its first round trip
    state = RunState()
    engine = Engine(rb, inv, BatchingFake(hosts), state, batch_verifies=True)

    async def consume():
        async for _batch in engine.run(ordered(rb), "verify"):
            pass

    task = asyncio.create_task(consume())
    for _ in range(300):
        await asyncio.sleep(0.01)
        if state.status("b", "n2") == Status.RUNNING:
            break
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    engine.drain()
    assert state.status("a", "n2") == Status.PASS  # in before the stop
    assert state.status("b", "n2") == Status.INTERRUPTED  # started, never ended
    assert state.status("fleet", "n2") == Status.PENDING  # never started
    hosts["n2"].slow = {}
    resumed = Engine(rb, inv, BatchingFake(hosts), state, batch_verifies=True)
    async for _batch in resumed.run(ordered(rb), "verify"):
        pass
    whole, _events, _t = await verify(rb, inv, {h: FakeHost() for h in inv.hosts}, batch_verifies=True)
    for step in rb.steps:
        for host in inv.hosts:
            assert state.status(step.id, host) == whole.status(step.id, host), (step.id, host)


async def test_an_exclusive_node_step_never_shares_a_round_trip(tmp_path):
    steps = STEPS.replace("verify: {run: version b}", "exclusive: node\n    verify: {run: version b}")
    rb, inv = load_world(tmp_path, steps, INVENTORY)
    assert rb.step("b").exclusive_scope == "node"
    hosts = {h: FakeHost() for h in inv.hosts}
    state, events, t = await verify(rb, inv, hosts, batch_verifies=True)
    assert all("version b" not in cmds for _, cmds in t.groups)
    # a runs alone (b, next, may not join it), b alone, then fleet with c and d
    assert [cmds for host, cmds in t.groups if host == "n1"] == [
        ["version f", "version c", "fail d"],
        ["version e", "version g"],
    ]
    assert all(state.status("b", h).value == "pass" for h in inv.hosts)
