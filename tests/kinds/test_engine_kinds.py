"""The step kinds through the real engine with a transport double whose
"fabric" is a few dicts: which (host, NIC) ends are slow, which hosts are slow
in a job, which are unreachable. It checks the choreography (server ready
before the client, one test per NIC at a time, bounded concurrency), the
tie-break and the attribution; the same steps over SSH against the simulator
are in tests/kinds/test_sim_kinds.py."""

from __future__ import annotations

import asyncio
import shlex
import time

import pytest

from runbook.definition.loader import load_runbook
from runbook.definition.model import Status
from runbook.engine.kinds.split import bound
from runbook.engine.runner import Engine
from runbook.inventory.load import load_inventory
from runbook.run.events import HostFinished
from runbook.run.state import RunState
from runbook.transport.result import CommandResult

STEPS = """\
phase: p
title: P
steps:
  - id: pair-bw
    title: pairs
    why: w
    hosts: compute
    pairs:
      plan: {plan}
      server: srv {{{{ nic.dev }}}}
      ready: "Waiting for client"
      concurrency: 3
    verify:
      run: cli {{{{ nic.dev }}}} {{{{ peer.inventory_hostname }}}} {{{{ peer_nic.dev }}}}
      expect:
        - {{contains: "BW fast"}}
  - id: job
    title: job
    why: w
    hosts: compute
    launch:
      launcher: launcher
    verify:
      run: job {{{{ launch_hosts }}}}
      expect:
        - {{contains: "busbw ok"}}
"""

INVENTORY = """\
all:
  children:
    compute:
      vars:
        compute_nics:
          - {dev: mA, rail: 1}
          - {dev: mB, rail: 2}
      hosts:
        n[01:08]:
    launcher:
      hosts:
        n01:
        n02:
"""


def job_of(command: str) -> str:
    """The step's own command inside a launch job's wrapper (engine/kinds/launchjob.py):
    the script setsid runs, after the line that records its pid; else `command`."""
    words = shlex.split(command)
    for i in range(len(words) - 4):
        if words[i : i + 4] == ["setsid", "-w", "sh", "-c"]:
            return words[i + 4].split("\n", 1)[1].strip()
    return command


class PairFabric:
    def __init__(self, slow_ends=(), slow_hosts=(), unreachable=()):
        self.slow_ends = set(slow_ends)
        self.slow_hosts = set(slow_hosts)
        self.unreachable = set(unreachable)
        self.waiting: dict[tuple[str, str], asyncio.Future] = {}
        self.busy: set[tuple[str, str]] = set()
        self.violations: list[str] = []
        self.active, self.peak = 0, 0
        self.jobs: list[list[str]] = []
        self.stops: list[tuple[str, str]] = []

    def _result(self, host, command, out, code=0, unknown=None):
        return CommandResult(
            host=host,
            command=command,
            exit_status=None if unknown else code,
            stdout=out,
            stderr="",
            started=time.time(),
            ended=time.time(),
            unknown_reason=unknown,
            started_remote=not unknown,
            attempts=1,
        )

    async def run(self, host, command, *, timeout, on_line=None, retries=0):
        if host in self.unreachable:
            return self._result(host, command, "", unknown="unreachable: connection refused")
        if command.startswith("found=0"):  # a launch job's stop command (launchjob.py)
            self.stops.append((host, command))
            return self._result(host, command, "runbook: no job running\n")
        words = shlex.split(job_of(command))
        if words[0] == "srv":
            end = (host, words[1])
            if end in self.busy:
                self.violations.append(f"{end} in two tests")
            self.busy.add(end)
            self.active += 1
            self.peak = max(self.peak, self.active)
            fut = asyncio.get_running_loop().create_future()
            self.waiting[end] = fut
            try:
                on_line("stdout", "* Waiting for client to connect... *")
                bw = await asyncio.wait_for(fut, timeout)
            finally:
                self.busy.discard(end)
                self.active -= 1
            return self._result(host, command, f"server BW {bw}\n")
        if words[0] == "cli":
            me, peer = (host, words[1]), (words[2], words[3])
            if me in self.busy:
                self.violations.append(f"{me} in two tests")
            fut = self.waiting.pop(peer, None)
            if fut is None:
                self.violations.append(f"client {me} ran before server {peer} listened")
                return self._result(host, command, "", code=1)
            slow = {me, peer} & self.slow_ends or {host, peer[0]} & self.slow_hosts
            bw = "slow" if slow else "fast"
            await asyncio.sleep(0.01)
            fut.set_result(bw)
            return self._result(host, command, f"BW {bw}\n", code=0)
        if words[0] == "job":
            members = words[1:]
            self.jobs.append(members)
            await asyncio.sleep(0.01)
            ok = not set(members) & self.slow_hosts
            return self._result(host, command, f"busbw {'ok' if ok else 'low'}\n")
        raise AssertionError(command)


def world(tmp_path, plan="rail"):
    (tmp_path / "steps").mkdir(exist_ok=True)
    (tmp_path / "steps" / "10-p.yaml").write_text(STEPS.format(plan=plan))
    (tmp_path / "inv.yaml").write_text(INVENTORY)
    return load_runbook(tmp_path / "steps"), load_inventory(tmp_path / "inv.yaml")


async def drive(rb, inv, fabric, step_id):
    state = RunState()
    engine = Engine(rb, inv, fabric, state)
    events = []
    async for batch in engine.run([rb.step(step_id)]):
        events.extend(batch)
    finished = {e.host: e for e in events if isinstance(e, HostFinished)}
    return state, finished


HOSTS = [f"n{i:02d}" for i in range(1, 9)]


@pytest.mark.parametrize("plan", ["rail", "ring", "cross_rail"])
async def test_compliant_pairs_pass_everywhere(tmp_path, plan):
    rb, inv = world(tmp_path, plan)
    fabric = PairFabric()
    state, finished = await drive(rb, inv, fabric, "pair-bw")
    assert {h: state.status("pair-bw", h) for h in HOSTS} == {h: Status.PASS for h in HOSTS}
    assert not fabric.violations
    assert fabric.peak <= 3


async def test_a_slow_link_is_named_on_its_host_only(tmp_path):
    rb, inv = world(tmp_path)
    fabric = PairFabric(slow_ends={("n05", "mB")})
    state, finished = await drive(rb, inv, fabric, "pair-bw")
    statuses = {h: state.status("pair-bw", h) for h in HOSTS}
    assert statuses == {h: Status.FAIL if h == "n05" else Status.PASS for h in HOSTS}
    ev = finished["n05"]
    assert ev.link == "n05 mB (rail 2)" and "the link n05 mB (rail 2)" in ev.reason
    assert ev.peer and ev.peer != "n06"  # named by the second partner, not the first
    assert "slow, but this end is fast with another partner" in finished["n06"].reason
    assert not fabric.violations and fabric.peak <= 3


async def test_a_slow_host_is_named_as_the_host(tmp_path):
    rb, inv = world(tmp_path, "ring")
    fabric = PairFabric(slow_hosts={"n03"})
    state, finished = await drive(rb, inv, fabric, "pair-bw")
    assert {h for h in HOSTS if state.status("pair-bw", h) == Status.FAIL} == {"n03"}
    assert "the host n03" in finished["n03"].reason
    assert not fabric.violations


async def test_an_unreachable_partner_is_unknown_not_blamed(tmp_path):
    rb, inv = world(tmp_path)
    fabric = PairFabric(unreachable={"n08"})
    state, finished = await drive(rb, inv, fabric, "pair-bw")
    assert state.status("pair-bw", "n08") == Status.UNKNOWN
    assert state.status("pair-bw", "n07") == Status.UNKNOWN  # its only partner could not run
    assert {state.status("pair-bw", h) for h in HOSTS[:6]} == {Status.PASS}


async def test_launch_names_the_slow_node_within_the_bound(tmp_path):
    rb, inv = world(tmp_path)
    fabric = PairFabric(slow_hosts={"n06"})
    state, finished = await drive(rb, inv, fabric, "job")
    assert {h: state.status("job", h) for h in HOSTS} == {
        h: Status.FAIL if h == "n06" else Status.PASS for h in HOSTS
    }
    assert fabric.jobs[0] == HOSTS
    rounds = finished["n06"].record["rounds"]
    assert rounds <= bound(len(HOSTS))
    assert finished["n06"].via == "n01" and "slow" in finished["n06"].reason


async def test_launch_launcher_unreachable_another_takes_over(tmp_path):
    rb, inv = world(tmp_path)
    fabric = PairFabric(unreachable={"n01"})
    state, finished = await drive(rb, inv, fabric, "job")
    # n01 is a target too: it cannot take part, but the job runs from n02
    assert all(e.via in ("n02", "") for e in finished.values())
    assert state.status("job", "n05") == Status.PASS
    assert "taken over" in finished["n05"].reason


async def test_resume_reruns_only_the_hosts_not_done(tmp_path):
    rb, inv = world(tmp_path)
    fabric = PairFabric(slow_hosts={"n04"})
    state = RunState()
    engine = Engine(rb, inv, fabric, state)
    async for _ in engine.run([rb.step("job")]):
        pass
    assert state.status("job", "n04") == Status.FAIL
    fabric.slow_hosts.clear()  # the node was fixed
    fabric.jobs.clear()
    async for _ in engine.run([rb.step("job")]):
        pass
    assert state.status("job", "n04") == Status.PASS
    assert len(fabric.jobs) == 1 and set(fabric.jobs[0]) == {"n04", "n01"}  # with one host already passed


@pytest.mark.parametrize("step_id", ["pair-bw", "job"])
async def test_the_journal_records_the_commands_filled_in(tmp_path, step_id):
    """HostStarted (the journal's `running` entry) names what ran, never a `{{ }}`:
    the client and server lines of a pair, the job as its launcher runs it."""
    from runbook.run.events import HostStarted

    rb, inv = world(tmp_path)
    engine = Engine(rb, inv, PairFabric(), RunState())
    started = []
    async for batch in engine.run([rb.step(step_id)]):
        started += [e for e in batch if isinstance(e, HostStarted)]
    assert {e.host for e in started} == set(HOSTS)
    assert started and not [e.command for e in started if "{{" in e.command]
    if step_id == "job":
        assert all(e.command == "job " + " ".join(HOSTS) for e in started[: len(HOSTS)])
    else:
        assert any(e.command.startswith("cli mA n") for e in started)
        assert any(e.command == "srv mA" for e in started)


async def test_a_launch_jobs_command_is_filled_once_per_job_not_per_host(tmp_path, monkeypatch):
    """Each fill of a job's command holds every node's name: filled per host, a
    job over the fleet costs the square of its size (engine/kinds/common.py
    running_as_one_job). The journal still names it on every host."""
    from runbook.engine.kinds.common import Ctx
    from runbook.run.events import HostStarted

    fills: list[str] = []
    real = Ctx.render

    def counted(self, template, on, extra=None):
        fills.append(template)
        return real(self, template, on, extra)

    monkeypatch.setattr(Ctx, "render", counted)
    rb, inv = world(tmp_path)
    fabric = PairFabric(slow_hosts={"n06"})  # split into smaller jobs until n06 is named
    engine = Engine(rb, inv, fabric, RunState())
    started = []
    async for batch in engine.run([rb.step("job")]):
        started += [e for e in batch if isinstance(e, HostStarted)]
    job_fills = [t for t in fills if t.startswith("job ")]
    assert len(fabric.jobs) > 1  # the whole job, then the split ones
    # one fill runs each job; one more names the first job in the journal, for
    # every host at once (later jobs' hosts have all started already)
    assert len(job_fills) == len(fabric.jobs) + 1
    assert {e.host for e in started} == set(HOSTS)
    assert {e.command for e in started} == {"job " + " ".join(HOSTS)}


async def test_a_launch_job_runs_under_its_marker_after_a_sweep_of_the_launchers(tmp_path):
    """Before its first job the step ends what a killed run of it left on every
    launcher candidate; each job runs under a directory of its run, step and hosts
    (engine/kinds/launchjob.py)."""
    from runbook.engine.kinds import launchjob

    rb, inv = world(tmp_path)
    fabric = PairFabric(slow_hosts={"n06"})
    sent = []
    run = fabric.run

    async def spy(host, command, **kw):
        sent.append((host, command))
        return await run(host, command, **kw)

    fabric.run = spy
    engine = Engine(rb, inv, fabric, RunState(), run_id="r7")
    async for _ in engine.run([rb.step("job")]):
        pass
    sweep = launchjob.stop_step_command("r7", "job")
    assert sent[:2] == [("n01", sweep), ("n02", sweep)] or sent[:2] == [("n02", sweep), ("n01", sweep)]
    jobs = [(h, c) for h, c in sent[2:] if not c.startswith("found=0")]
    assert jobs and all(h == "n01" for h, _ in jobs)
    first = launchjob.job_dir("r7", "job", HOSTS)
    assert jobs[0][1] == launchjob.wrap("job " + " ".join(HOSTS), first, HOSTS)
    assert len({c for _h, c in jobs}) == len(jobs)  # every job of the split under its own directory
    assert len(fabric.stops) == 2  # nothing cut short: no other stop


async def test_a_launch_timeout_ends_that_job(tmp_path):
    from runbook.engine.kinds import launchjob

    rb, inv = world(tmp_path)
    fabric = PairFabric()
    fabric.calls = []
    run = fabric.run

    async def timing_out(host, command, **kw):
        fabric.calls.append((host, command))
        if command.startswith("found=0"):
            return await run(host, command, **kw)
        res = fabric._result(host, command, "", unknown="timeout after 1800s")
        res.started_remote = True
        return res

    fabric.run = timing_out
    state, finished = await drive(rb, inv, fabric, "job")
    stops = [
        (h, c) for h, c in fabric.stops if c == launchjob.stop_command(launchjob.job_dir("", "job", HOSTS))
    ]
    assert stops and stops[0][0] == "n01"
    assert {state.status("job", h) for h in HOSTS} == {Status.UNKNOWN}
    assert "timeout after 1800s; n01: no job running" in finished["n05"].reason
    # a job that ran and timed out is not run again from the next launcher (n02):
    # that would cost a second whole timeout; only an unreachable launcher hands over
    assert [h for h, c in fabric.calls if not c.startswith("found=0")] == ["n01"]
    assert "taken over" not in finished["n05"].reason


class CleanedFabric(PairFabric):
    """PairFabric with the step's `cleanup:` (`stop PORT`): each is recorded, and
    the one on `held` waits until some other host's server has started."""

    def __init__(self, held: str):
        super().__init__()
        self.held = held
        self.order: list[tuple[str, str]] = []  # (host, "stop" | "srv")
        self.a_server_started = asyncio.Event()
        self.held_saw_a_server: bool | None = None

    async def run(self, host, command, *, timeout, on_line=None, retries=0):
        word = command.split()[0]
        self.order.append((host, word))
        if word == "stop":
            if host == self.held:
                try:
                    await asyncio.wait_for(self.a_server_started.wait(), 2.0)
                    self.held_saw_a_server = True
                except TimeoutError:
                    self.held_saw_a_server = False
            return self._result(host, command, "")
        if word == "srv":
            self.a_server_started.set()
        return await super().run(host, command, timeout=timeout, on_line=on_line, retries=retries)


async def test_left_servers_are_stopped_on_each_host_before_its_first_server_not_all_first(tmp_path):
    (tmp_path / "steps").mkdir()
    with_cleanup = STEPS.format(plan="rail").replace(
        "      concurrency: 3\n", '      concurrency: 8\n      cleanup: "stop {{ port }}"\n', 1
    )
    (tmp_path / "steps" / "10-p.yaml").write_text(with_cleanup)
    (tmp_path / "inv.yaml").write_text(INVENTORY)
    rb, inv = load_runbook(tmp_path / "steps"), load_inventory(tmp_path / "inv.yaml")
    fabric = CleanedFabric(held=HOSTS[-1])  # rail pairs: every host serves on some rail
    state, _ = await drive(rb, inv, fabric, "pair-bw")
    assert {h: state.status("pair-bw", h) for h in HOSTS} == {h: Status.PASS for h in HOSTS}
    stops = [h for h, w in fabric.order if w == "stop"]
    served = {h for h, w in fabric.order if w == "srv"}
    assert sorted(stops) == sorted(served), fabric.order  # once on each server host
    for host in served:  # and before its first server
        seq = [w for h, w in fabric.order if h == host and w in ("stop", "srv")]
        assert seq[0] == "stop", (host, seq)
    # a host slow to answer its cleanup does not hold the others' tests back
    assert fabric.held_saw_a_server is True
