"""Verify runs of several steps are pipelined per host (runbook/engine/scheduler.py):
a slow host holds up nobody else, `needs` and fleet criteria still wait for
what they judge, barrier steps run alone, and the verdicts are those of a run
made step after step. Orders of events are asserted, never timings."""

import asyncio

import pytest

from runbook.definition.loader import load_runbook
from runbook.definition.model import Status
from runbook.definition.targets import ordered
from runbook.engine.runner import Engine
from runbook.engine.scheduler import barrier, segments
from runbook.errors import InputError
from runbook.run.events import HostFinished, HostOutput, HostStarted, StepFinished, StepStarted
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
  - id: c
    title: c
    why: w
    hosts: compute
    needs: [a]
    verify: {run: version c}
  - id: fleet
    title: fleet
    why: w
    hosts: compute
    verify:
      run: version f
      expect:
        - {consistent: stdout}
  - id: sm1
    title: sm
    why: w
    hosts: sm
    verify: {run: version s}
  - id: d
    title: d
    why: w
    hosts: compute
    needs: [sm1]
    verify: {run: version d}
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
"""

INVENTORY = """\
all:
  children:
    compute:
      hosts:
        n[1:4]:
    sm:
      hosts:
        s1:
"""


@pytest.fixture
def world(tmp_path):
    rb, inv = load_world(tmp_path, STEPS, INVENTORY)
    return rb, inv


async def pipelined(rb, inv, hosts):
    state = RunState()
    engine = Engine(rb, inv, FakeTransport(hosts), state)
    events = []
    async for batch in engine.run(ordered(rb), "verify"):
        events.extend(batch)
    return state, events


def first(events, kind, step, host=None):
    return next(
        i
        for i, e in enumerate(events)
        if isinstance(e, kind) and e.step_id == step and (host is None or e.host == host)
    )


def last(events, kind, step):
    return max(i for i, e in enumerate(events) if isinstance(e, kind) and e.step_id == step)


def test_barriers_and_segments(world):
    rb, _inv = world
    assert [s.id for s in rb.steps if barrier(s)] == ["x"]
    assert [[s.id for s in seg] for seg in segments(rb.steps)] == [
        ["a", "b", "c", "fleet", "sm1", "d"],
        ["x"],
        ["e"],
    ]


def test_a_step_needing_a_later_one_runs_alone(world):
    rb, _inv = world
    steps = [rb.step("c"), rb.step("b"), rb.step("a")]  # c needs a, which comes after it
    assert [[s.id for s in seg] for seg in segments(steps)] == [["c"], ["b", "a"]]


async def test_a_slow_host_holds_up_nobody(world):
    rb, inv = world
    hosts = {h: FakeHost() for h in inv.hosts}
    hosts["n1"].slow = {"version a": 0.3}
    state, events = await pipelined(rb, inv, hosts)
    # n2 is done with b (and c) while n1 is still in a
    assert first(events, HostFinished, "b", "n2") < first(events, HostFinished, "a", "n1")
    assert first(events, HostFinished, "c", "n2") < first(events, HostFinished, "a", "n1")
    # but n1 runs c (needs a) only after its own a
    assert first(events, HostStarted, "c", "n1") > first(events, HostFinished, "a", "n1")
    assert all(
        state.status(s.id, h) == Status.PASS
        for s in rb.steps
        for h in inv.hosts
        if h in state.step_hosts(s.id)
    )


async def test_needs_blocks_per_host_as_before(world):
    rb, inv = world
    hosts = {h: FakeHost() for h in inv.hosts}
    hosts["n2"].version = "5.8"  # fails a
    hosts["n2"].slow = {"version a": 0.2}
    state, events = await pipelined(rb, inv, hosts)
    assert state.status("a", "n2") == Status.FAIL
    assert state.status("c", "n2") == Status.BLOCKED and "needs a" in state.reason("c", "n2")
    assert state.status("e", "n2") == Status.BLOCKED and "needs c" in state.reason("e", "n2")
    assert not any(cmd.startswith("version c") for cmd in hosts["n2"].log)
    assert state.status("c", "n1") == Status.PASS
    # the blocked host is announced with its step, after the step started
    assert first(events, StepStarted, "c") < first(events, HostFinished, "c", "n2")


async def test_a_need_on_other_hosts_waits_for_all_of_them(world):
    rb, inv = world
    hosts = {h: FakeHost() for h in inv.hosts}
    hosts["s1"].slow = {"version s": 0.3}
    state, events = await pipelined(rb, inv, hosts)
    assert min(i for i, e in enumerate(events) if isinstance(e, HostStarted) and e.step_id == "d") > first(
        events, StepFinished, "sm1"
    )
    assert all(state.status("d", h) == Status.PASS for h in ("n1", "n2", "n3", "n4"))


async def test_a_fleet_criterion_waits_for_every_host_but_the_hosts_go_on(world):
    rb, inv = world
    hosts = {h: FakeHost() for h in inv.hosts}
    hosts["n3"].version = "9.9"  # the outlier of `consistent`
    hosts["n3"].slow = {"version f": 0.3}  # and the last to answer
    hosts["n2"].version = "23.10"
    state, events = await pipelined(rb, inv, hosts)
    assert state.status("fleet", "n3") == Status.FAIL and "outliers n3" in state.reason("fleet", "n3")
    assert state.status("fleet", "n1") == Status.PASS
    # every verdict of the step comes after the last host answered ...
    assert first(events, HostFinished, "fleet", "n1") > first(events, HostFinished, "a", "n3")
    # ... while n1 has already gone on to the next steps
    assert first(events, HostStarted, "sm1") < first(events, HostFinished, "fleet", "n1") or first(
        events, HostStarted, "d", "n1"
    ) < first(events, HostFinished, "fleet", "n1")


async def test_an_exclusive_step_runs_alone(world):
    rb, inv = world
    hosts = {h: FakeHost() for h in inv.hosts}
    hosts["n4"].slow = {"version d": 0.2}
    hosts["n1"].slow = {"version x": 0.2}
    _state, events = await pipelined(rb, inv, hosts)
    x_first = min(
        i for i, e in enumerate(events) if isinstance(e, (HostStarted, StepStarted)) and e.step_id == "x"
    )
    before = [s for s in ("a", "b", "c", "fleet", "sm1", "d")]
    assert all(last(events, StepFinished, s) < x_first for s in before)
    assert last(events, StepFinished, "x") < first(events, StepStarted, "e")


async def test_same_verdicts_as_step_after_step(world):
    rb, inv = world

    def faulty():
        hosts = {h: FakeHost() for h in inv.hosts}
        hosts["n2"].version = "5.8"
        hosts["n4"].reachable = False
        hosts["n1"].slow = {"version a": 0.1, "version f": 0.1}
        return hosts

    state, _ = await pipelined(rb, inv, faulty())
    alone = RunState()
    engine = Engine(rb, inv, FakeTransport(faulty()), alone)
    for step in ordered(rb):  # one step per run: the runner's step-by-step path
        async for _batch in engine.run([step], "verify"):
            pass
    for s in rb.steps:
        for h in inv.hosts:
            assert (state.status(s.id, h), state.reason(s.id, h)) == (
                alone.status(s.id, h),
                alone.reason(s.id, h),
            )


class OneAtATime(FakeTransport):
    """Records every command that starts on a host while another one runs there."""

    def __init__(self, hosts):
        super().__init__(hosts)
        self.running: dict[str, set[str]] = {}
        self.overlaps: list[tuple[str, str, tuple[str, ...]]] = []

    async def run(self, host, command, **kw):
        mine = self.running.setdefault(host, set())
        if mine:
            self.overlaps.append((host, command, tuple(sorted(mine))))
        mine.add(command)
        try:
            return await super().run(host, command, **kw)
        finally:
            mine.discard(command)


async def test_a_node_exclusive_step_has_its_host_alone_and_the_others_go_on(tmp_path):
    rb, inv = load_world(tmp_path, STEPS.replace("exclusive: true", "exclusive: node"), INVENTORY)
    x = rb.step("x")
    assert x.exclusive and x.exclusive_scope == "node" and not barrier(x)
    assert [[s.id for s in seg] for seg in segments(rb.steps)] == [
        ["a", "b", "c", "fleet", "sm1", "d", "x", "e"]
    ]
    hosts = {h: FakeHost() for h in inv.hosts}
    hosts["n4"].slow = {"version d": 0.3}
    hosts["n1"].slow = {"version x": 0.1}
    transport = OneAtATime(hosts)
    state, events = RunState(), []
    async for batch in Engine(rb, inv, transport, state).run(ordered(rb), "verify"):
        events.extend(batch)
    # n1 is in x (and done with it) while n4 is still in d: no fleet barrier ...
    assert first(events, HostFinished, "x", "n1") < first(events, HostFinished, "d", "n4")
    # ... but nothing else ran on any host beside another command, x included,
    # and x ran as its own command
    assert transport.overlaps == []
    assert all(hosts[h].log.count("version x") == 1 for h in ("n1", "n2", "n3", "n4"))
    assert all(state.status("x", h) == Status.PASS for h in ("n1", "n2", "n3", "n4"))


def test_a_detached_step_is_a_barrier_unless_it_only_needs_its_node(tmp_path):
    detached = STEPS.replace(
        "    exclusive: true\n    verify: {run: version x}", "    verify: {run: version x, detach: true}"
    )
    rb, _inv = load_world(tmp_path / "fleet", detached, INVENTORY)
    assert barrier(rb.step("x"))
    node = detached.replace(
        "    verify: {run: version x, detach: true}",
        "    exclusive: node\n    verify: {run: version x, detach: true}",
    )
    rb, _inv = load_world(tmp_path / "node", node, INVENTORY)
    assert not barrier(rb.step("x"))


def test_exclusive_is_linted(tmp_path):
    (tmp_path / "10-p.yaml").write_text(STEPS.replace("exclusive: true", "exclusive: yes please"))
    with pytest.raises(InputError, match=r"10-p.yaml:\d+: .*exclusive must be true, false or node"):
        load_runbook(tmp_path)


def test_only_a_per_host_step_can_be_node_exclusive(tmp_path):
    pairs = """\
phase: p
title: P
steps:
  - id: pb
    title: pairs
    why: w
    hosts: compute
    exclusive: node
    pairs: {plan: rail, server: srv, ready: Waiting}
    verify: {run: cli}
"""
    (tmp_path / "10-p.yaml").write_text(pairs)
    with pytest.raises(
        InputError, match=r"10-p.yaml:8: step pb: exclusive: node is for a step that runs on each host"
    ):
        load_runbook(tmp_path)


def test_a_manual_step_cannot_be_exclusive(tmp_path):
    manual = """\
phase: p
title: P
steps:
  - id: m
    title: m
    why: w
    hosts: compute
    manual: true
    exclusive: true
    checklist: [look]
"""
    (tmp_path / "10-p.yaml").write_text(manual)
    with pytest.raises(InputError, match="a manual step runs nothing"):
        load_runbook(tmp_path)


# --- read-only fleet sweeps (run_on: one) inside a pipelined segment ----------

SWEEP_STEPS = """\
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
  - id: x
    title: x
    why: w
    hosts: compute
    exclusive: node
    verify: {run: version x}
  - id: slow
    title: slow
    why: w
    hosts: compute
    verify: {run: version slow}
  - id: sw
    title: sweep
    why: w
    hosts: compute
    run_on: one
    needs: [a]
    verify:
      run: sha256sum /etc/x
      parse: sha256sum
      expect:
        - {path: count, eq: 1}
  - id: after
    title: after
    why: w
    hosts: compute
    needs: [sw]
    verify: {run: version after}
"""


def sweep_world(tmp_path, steps=SWEEP_STEPS):
    return load_world(tmp_path, steps, INVENTORY)


async def run_all(rb, inv, transport):
    state, events = RunState(), []
    async for batch in Engine(rb, inv, transport, state).run(ordered(rb), "verify"):
        events.extend(batch)
    return state, events


def test_a_read_only_sweep_is_no_barrier(tmp_path):
    rb, _inv = sweep_world(tmp_path)
    assert not barrier(rb.step("sw"))
    assert [[s.id for s in seg] for seg in segments(rb.steps)] == [["a", "x", "slow", "sw", "after"]]


async def test_a_sweep_starts_before_an_unrelated_slow_step_ends(tmp_path):
    rb, inv = sweep_world(tmp_path)
    hosts = {h: FakeHost() for h in inv.hosts}
    hosts["n4"].slow = {"version slow": 0.4}
    state, events = await run_all(rb, inv, FakeTransport(hosts))
    # the sweep needs only `a`: it does not wait for n4's slow step ...
    assert first(events, StepStarted, "sw") < first(events, HostFinished, "slow", "n4")
    assert first(events, StepFinished, "sw") < first(events, HostFinished, "slow", "n4")
    # ... and a step needing the sweep runs on a host only once the sweep judged it
    for h in ("n1", "n2", "n3", "n4"):
        assert first(events, HostStarted, "after", h) > first(events, HostFinished, "sw", h)
    assert hosts["n1"].log.count("sha256sum /etc/x") == 1  # one command, from the first compute node
    assert sum(h.log.count("sha256sum /etc/x") for h in hosts.values()) == 1
    assert all(
        state.status(s, h) == Status.PASS
        for s in ("a", "x", "slow", "sw", "after")
        for h in ("n1", "n2", "n3", "n4")
    )
    assert "as designed, seen by n1" in state.reason("sw", "n3")


async def test_a_sweep_waits_for_its_needs_on_every_host_and_is_gated_as_before(tmp_path):
    rb, inv = sweep_world(tmp_path)
    hosts = {h: FakeHost() for h in inv.hosts}
    hosts["n3"].slow = {"version a": 0.3}
    hosts["n2"].version = "5.8"  # fails a: blocked in the sweep, and so in `after`
    state, events = await run_all(rb, inv, FakeTransport(hosts))
    started = first(events, StepStarted, "sw")
    assert started > first(events, HostFinished, "a", "n3")
    # before it, only the blocked host's answer (announced first, as the runner does)
    before = [e for e in events[:started] if isinstance(e, (HostStarted, HostFinished)) and e.step_id == "sw"]
    assert [(type(e), e.host) for e in before] == [(HostFinished, "n2")]
    assert state.status("sw", "n2") == Status.BLOCKED and "needs a" in state.reason("sw", "n2")
    assert events[started].hosts == ("n1", "n3", "n4")  # StepStarted names the runnable hosts
    assert state.status("after", "n2") == Status.BLOCKED and "needs sw" in state.reason("after", "n2")
    assert all(state.status("sw", h) == Status.PASS for h in ("n1", "n3", "n4"))
    assert all(state.status("after", h) == Status.PASS for h in ("n1", "n3", "n4"))
    # one StepStarted, one result per host, one StepFinished: as the runner records a sweep
    assert sum(isinstance(e, StepStarted) and e.step_id == "sw" for e in events) == 1
    assert sum(isinstance(e, StepFinished) and e.step_id == "sw" for e in events) == 1
    assert sorted(e.host for e in events if isinstance(e, HostFinished) and e.step_id == "sw") == [
        "n1",
        "n2",
        "n3",
        "n4",
    ]


async def test_an_exclusive_sweep_still_runs_alone(tmp_path):
    rb, inv = sweep_world(
        tmp_path, SWEEP_STEPS.replace("    run_on: one\n", "    run_on: one\n    exclusive: true\n")
    )
    assert barrier(rb.step("sw"))
    assert [[s.id for s in seg] for seg in segments(rb.steps)] == [["a", "x", "slow"], ["sw"], ["after"]]
    hosts = {h: FakeHost() for h in inv.hosts}
    hosts["n4"].slow = {"version slow": 0.2}
    _state, events = await run_all(rb, inv, FakeTransport(hosts))
    sw_first = min(i for i, e in enumerate(events) if e.step_id == "sw" and not isinstance(e, HostOutput))
    assert all(last(events, StepFinished, s) < sw_first for s in ("a", "x", "slow"))
    assert last(events, StepFinished, "sw") < first(events, StepStarted, "after")


class OverlapsOf(FakeTransport):
    """Records each command that overlaps, on one host, a command starting with `watched`."""

    def __init__(self, hosts, watched):
        super().__init__(hosts)
        self.watched = watched
        self.running: dict[str, set[str]] = {}
        self.overlaps: list[tuple[str, str, str]] = []

    async def run(self, host, command, **kw):
        mine = self.running.setdefault(host, set())
        for other in mine:
            if command.startswith(self.watched) or other.startswith(self.watched):
                self.overlaps.append((host, other, command))
        mine.add(command)
        try:
            return await super().run(host, command, **kw)
        finally:
            mine.discard(command)


async def test_a_sweep_never_runs_beside_a_node_exclusive_step_on_its_runner(tmp_path):
    rb, inv = sweep_world(tmp_path)
    hosts = {h: FakeHost() for h in inv.hosts}
    hosts["n1"].slow = {"version x": 0.3, "sha256sum": 0.1}  # n1 runs the sweep
    transport = OverlapsOf(hosts, "version x")
    state, events = await run_all(rb, inv, transport)
    assert transport.overlaps == []
    # the sweep waited for n1's x, while the other hosts went on
    assert first(events, HostFinished, "sw", "n2") > first(events, HostFinished, "x", "n1")
    assert first(events, HostFinished, "slow", "n2") < first(events, HostFinished, "x", "n1")
    assert all(state.status("sw", h) == Status.PASS for h in ("n1", "n2", "n3", "n4"))


async def test_a_sweep_gives_the_verdicts_of_step_after_step(tmp_path):
    rb, inv = sweep_world(tmp_path)

    def faulty():
        hosts = {h: FakeHost() for h in inv.hosts}
        hosts["n2"].version = "5.8"
        hosts["n4"].reachable = False
        hosts["n3"].slow = {"version a": 0.1, "version slow": 0.2}
        return hosts

    state, _ = await run_all(rb, inv, FakeTransport(faulty()))
    alone = RunState()
    engine = Engine(rb, inv, FakeTransport(faulty()), alone)
    for step in ordered(rb):  # one step per run: the runner's step-by-step path
        async for _batch in engine.run([step], "verify"):
            pass
    for s in rb.steps:
        for h in inv.hosts:
            assert (state.status(s.id, h), state.reason(s.id, h)) == (
                alone.status(s.id, h),
                alone.reason(s.id, h),
            )


async def test_a_run_stopped_mid_sweep_resumes_to_the_same_verdicts(tmp_path):
    rb, inv = sweep_world(tmp_path)

    def fleet():
        hosts = {h: FakeHost() for h in inv.hosts}
        hosts["n2"].version = "5.8"  # blocked in the sweep
        hosts["n1"].slow = {"sha256sum": 0.3}  # the sweep's command, in flight when stopped
        hosts["n4"].slow = {"version slow": 0.6}  # a walking host, in flight too
        return hosts

    whole, _ = await run_all(rb, inv, FakeTransport(fleet()))
    state = RunState()
    engine = Engine(rb, inv, FakeTransport(fleet()), state)

    async def consume():
        async for _batch in engine.run(ordered(rb), "verify"):
            pass

    task = asyncio.create_task(consume())
    for _ in range(200):
        await asyncio.sleep(0.01)
        if state.status("sw", "n3") == Status.RUNNING:
            break
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    engine.drain()
    assert state.status("sw", "n3") == Status.INTERRUPTED
    assert state.status("slow", "n4") == Status.INTERRUPTED
    assert state.status("after", "n3") == Status.PENDING  # never started before its sweep
    async for _batch in Engine(rb, inv, FakeTransport(fleet()), state).run(ordered(rb), "verify"):
        pass  # the resume: only what is not satisfied runs again
    for s in rb.steps:
        for h in inv.hosts:
            assert (state.status(s.id, h), state.reason(s.id, h)) == (
                whole.status(s.id, h),
                whole.reason(s.id, h),
            )


async def test_a_sweep_needing_a_step_of_other_hosts_waits_for_all_of_them(tmp_path):
    steps = SWEEP_STEPS.replace("    needs: [a]\n", "    needs: [a, sm1]\n") + (
        "  - id: sm1\n    title: sm\n    why: w\n    hosts: sm\n    verify: {run: version s}\n"
    )
    # sm1 comes last in the file: the runbook's order puts it before the sweep (its need)
    rb, inv = sweep_world(tmp_path, steps)
    assert [s.id for s in ordered(rb)].index("sm1") < [s.id for s in ordered(rb)].index("sw")
    hosts = {h: FakeHost() for h in inv.hosts}
    hosts["s1"].slow = {"version s": 0.3}
    hosts["n4"].slow = {"version slow": 0.6}
    state, events = await run_all(rb, inv, FakeTransport(hosts))
    assert first(events, StepStarted, "sw") > first(events, StepFinished, "sm1")
    assert first(events, StepFinished, "sw") < first(events, HostFinished, "slow", "n4")
    assert all(state.status("sw", h) == Status.PASS for h in ("n1", "n2", "n3", "n4"))
