"""Verify runs of several steps, pipelined: each host walks the steps on its own.

A host that has finished step k goes on to step k+1 without waiting for the
slowest host of step k: waiting for it at every step costs, over a runbook,
each step's slowest host's lag behind the others (on a large fleet, seconds:
bench/results/pipeline.md). What stays ordered:

- `needs`: a host waits, before a step, for its prerequisites' results on that
  host (a prerequisite that does not target the host: for all of its hosts),
  then is gated on them exactly as before (run/rules.py blocked_reason);
- a fleet criterion (criteria/fleet.py) is judged once every host of its step
  has answered: the hosts' verdicts are held till then, the hosts go on;
- a step that must not overlap anything (`barrier`) runs alone: everything
  before it is finished first, nothing after it starts until it is; one that
  must only have its host to itself (`exclusive: node`) has it, as every
  step does here: a host runs one step at a time (steps that share a round
  trip, batchrun.py, run one after the other in it; an exclusive step never
  shares one).

A read-only fleet sweep (`sweep`: `run_on: one`, not `exclusive`, not
detached; iblinkinfo, ibnetdiscover, ibdiagnet without --pc) is no barrier.
It only reads the fabric, through one host's port, so the per-host checks of
the others neither disturb it nor are disturbed by it. In a segment:

- it starts once every host it judges has its `needs` results (the same
  waits as a host's own, `_wait_for_needs`), then runs as the runner runs it
  (kinds/run_on_one.py through kinds.run_kind): the hosts gated exactly as
  before (blocked_reason), StepStarted naming the runnable ones, HostStarted
  for each as the command starts, one HostFinished per host from the sweep's
  record, StepFinished; nothing is recorded for a host of the sweep before
  the sweep has judged it;
- meanwhile the hosts walk on: they skip the sweep (it is not theirs to run)
  and go on with their later steps. A later step that `needs` the sweep waits
  for it like for any prerequisite: on a host the sweep judges, until the
  sweep has ended (its StepFinished emitted, every host's result durable),
  then it is gated on the sweep's verdict for that host;
- the host that runs the sweep's command (its first reachable candidate)
  walks on too: both only read, and a host runs only one of its own steps at
  a time; but an `exclusive: node` step is promised its host alone, so it and
  the sweep's command never overlap on one host (nodeuse.py). A sweep that
  waits there for such a step to end has emitted its HostStarted already, as
  a command waiting for its connection has: the hosts show it running.

A sweep that writes (resets counters), or that loads what the others measure,
is marked `exclusive: true` and stays a barrier; so do the other kinds (pairs,
launch) and detached jobs.

Apply and rollback keep the runner's step-by-step order (runner.py); so does a
run of one step. The events are the runner's own (StepStarted when the first
host reaches the step, naming every host selected for it; StepFinished once
its last host is done), so the state, the journal and a resume read them as
before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from ..definition.model import Status, Step
from ..inventory.load import select_hosts
from ..run import rules
from ..run.events import HostFinished, StepStarted
from .batchrun import MAX_BATCH, batchable, can_batch, verify_together
from .hostrun import HostOutcome
from .nodeuse import NodeUse
from .pacing import start_paced


def sweep(step: Step) -> bool:
    """A read-only fleet sweep: `run_on: one` (one host reads the fabric for
    the step's hosts), not `exclusive`, not detached."""
    v = step.verify
    return step.kind == "one" and not step.exclusive and v is not None and not v.detach


def barrier(step: Step) -> bool:
    """Steps that must not overlap other work: the multi-host kinds (pairs,
    launch), a `run_on: one` step marked `exclusive: true` or detached, long
    detached jobs (burn-in, diagnostics) and any step marked `exclusive: true`
    (bandwidth and NCCL tests).

    A step marked `exclusive: node` (a test of one node's own GPUs, PCIe or
    NIC) is no barrier: it is pipelined, and a host walks its steps one at a
    time (Pipeline._walk), so nothing else runs on that host beside it while
    the other hosts go on with theirs. Nor is a read-only sweep (`sweep`):
    it runs beside the walking hosts (Pipeline._sweep)."""
    if step.kind != "each":
        return not sweep(step)
    if step.exclusive:
        return step.exclusive_scope != "node"
    return bool(step.verify and step.verify.detach)


def segments(steps: list[Step]) -> list[list[Step]]:
    """Consecutive steps split into runs of pipelined steps and single barrier
    steps, in order. A step needing a step that comes later (or itself) is run
    alone too: it is then judged on what that step had before, as today."""
    out: list[list[Step]] = []
    current: list[Step] = []
    position = {s.id: i for i, s in enumerate(steps)}
    for i, step in enumerate(steps):
        backward = all(position.get(n, -1) < i for n in step.needs)
        if barrier(step) or not backward:
            if current:
                out.append(current)
                current = []
            out.append([step])
        else:
            current.append(step)
    if current:
        out.append(current)
    return out


class _StepRun:
    """One pipelined step: its selected hosts, those still owed, held fleet outcomes."""

    def __init__(self, step: Step, selected: list[str], fleet: bool):
        self.step = step
        self.selected = selected
        self.fleet = fleet
        self.sweep = sweep(step)  # run once for all its hosts (Pipeline._sweep), not walked
        self.started = False
        self.owed = set(selected)
        self.held: dict[str, HostOutcome] = {}
        self.all_in = asyncio.Event()  # every selected host has answered
        self.done = asyncio.Event()  # StepFinished emitted: the step's results are final
        self.host_done: dict[str, asyncio.Event] = {h: asyncio.Event() for h in selected}
        if not selected:  # nothing to run: nothing is emitted for it (as in runner.py)
            self.all_in.set()
            self.done.set()


class Pipeline:
    """The steps of one pipelined segment on the engine (runner.py's Engine)."""

    def __init__(self, engine, steps: list[Step], select: Callable[[Step], list[str]]):
        from .runner import has_fleet_checks

        self.engine = engine
        self.steps = steps
        self.runs = {
            s.id: _StepRun(s, select(s) if s.verify is not None else [], has_fleet_checks(s)) for s in steps
        }
        self.gating: dict = {}  # blocked_reason's memo: filled only with final statuses
        self._prereq_hosts: dict[str, set[str]] = {}
        self.node_use = NodeUse()  # a sweep's command vs an `exclusive: node` step on one host

    async def run(self) -> None:
        walked = [r for r in self.runs.values() if r.selected and not r.sweep]
        hosts = list(dict.fromkeys(h for r in walked for h in r.selected))
        closers = [asyncio.create_task(self._close(r)) for r in walked]
        sweeps = [asyncio.create_task(self._sweep(r)) for r in self.runs.values() if r.selected and r.sweep]
        walkers = await start_paced(self._walk, hosts)
        tasks = closers + sweeps + walkers
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for t in tasks:
                t.cancel()
            raise

    # --- one host through the steps ------------------------------------
    async def _walk(self, host: str) -> None:
        steps = self.steps
        i = 0
        while i < len(steps):
            step = steps[i]
            i += 1
            r = self.runs[step.id]
            if r.sweep or host not in r.host_done:
                continue  # a sweep is not the host's to run (_sweep)
            await self._wait_for_needs(step, host)
            if await self._blocked(r, host):
                continue
            if step.exclusive:  # `exclusive: node` (the others are barriers): no sweep beside it
                async with self.node_use.alone(host):
                    outcome = await self.engine._one(step, "verify", step.verify, host)
                self._post(step, host, outcome)
                continue
            if not (batchable(step) and can_batch(self.engine, host)):
                self._post(step, host, await self.engine._one(step, "verify", step.verify, host))
                continue
            ready = [step]
            while i < len(steps) and len(ready) < MAX_BATCH:
                nxt = steps[i]
                rn = self.runs[nxt.id]
                if host in rn.host_done and not rn.sweep:
                    if not (batchable(nxt) and self._needs_in(nxt, host)):
                        break  # it waits for a step still to run: the next round trip
                    if not await self._blocked(rn, host):
                        ready.append(nxt)
                i += 1
            if len(ready) == 1:
                self._post(step, host, await self.engine._one(step, "verify", step.verify, host))
            else:
                await verify_together(self.engine, host, ready, lambda s, o: self._post(s, host, o))

    async def _blocked(self, r: _StepRun, host: str) -> bool:
        """The step has begun for this host: StepStarted (once), and when a `needs`
        is not satisfied, the host answered `blocked`."""
        step = r.step
        self._open(r)
        if not step.needs:
            return False
        await self.engine._settle()  # statuses read below are durable ones
        why = rules.blocked_reason(
            step,
            host,
            self.engine.runbook,
            self.engine.inventory,
            self.engine.state.status,
            self.gating,
        )
        if why:
            self.engine._emit(HostFinished(step.id, "verify", host, Status.BLOCKED.value, why))
            self._answered(r, host)
        return bool(why)

    def _post(self, step: Step, host: str, outcome: HostOutcome) -> None:
        r = self.runs[step.id]
        if r.fleet and outcome.assessed:
            r.held[host] = outcome  # judged with the fleet once all are in (_close)
            self._answered(r, host, final=False)
        else:
            self.engine._finish(step, "verify", outcome)
            self._answered(r, host)

    def _needs_in(self, step: Step, host: str) -> bool:
        """Whatever `_wait_for_needs` would wait for is in already."""
        for need in step.needs:
            pre = self.runs.get(need)
            if pre is None:
                continue
            if host in self._hosts_of(need):
                ev = pre.host_done.get(host)
                if ev is not None and not ev.is_set():
                    return False
            elif not pre.done.is_set():
                return False
        return True

    async def _wait_for_needs(self, step: Step, host: str) -> None:
        for need in step.needs:
            pre = self.runs.get(need)
            if pre is None:  # not in this segment: already final
                continue
            if host in self._hosts_of(need):
                ev = pre.host_done.get(host)
                if ev is not None:  # not selected: its earlier result stands
                    await ev.wait()
            else:
                await pre.done.wait()

    def _hosts_of(self, step_id: str) -> set[str]:
        # the same selection blocked_reason judges a prerequisite's hosts by
        if step_id not in self._prereq_hosts:
            pre = self.engine.runbook.step(step_id)
            self._prereq_hosts[step_id] = set(select_hosts(self.engine.inventory, pre.hosts))
        return self._prereq_hosts[step_id]

    def _open(self, r: _StepRun) -> None:
        if not r.started:
            r.started = True
            e = self.engine
            e._emit(
                StepStarted(
                    r.step.id, "verify", tuple(r.selected), r.step.sha256, inventory_sha256=e.inventory.sha256
                )
            )

    def _answered(self, r: _StepRun, host: str, *, final: bool = True) -> None:
        if final:
            r.host_done[host].set()
        r.owed.discard(host)
        if not r.owed:
            r.all_in.set()

    # --- a read-only fleet sweep ----------------------------------------
    async def _sweep(self, r: _StepRun) -> None:
        """Once every host it judges has its `needs` results, the sweep as the
        runner runs it (kinds.run_kind: gating, StepStarted, the hosts' results,
        StepFinished); the steps that need it are then let through."""
        from .kinds import run_kind

        for host in r.selected:
            await self._wait_for_needs(r.step, host)
        r.started = True
        await run_kind(self.engine, r.step, r.selected, on_host=self.node_use.sweep)
        for ev in r.host_done.values():
            ev.set()
        r.owed.clear()
        r.all_in.set()
        r.done.set()

    # --- one step's end ------------------------------------------------
    async def _close(self, r: _StepRun) -> None:
        await r.all_in.wait()
        if r.held:
            self.engine._judge_fleet(r.step, r.held)
            for h in r.held:
                r.host_done[h].set()
        await self.engine._step_finished(r.step, "verify", r.selected)
        r.done.set()
