"""The engine: runs steps on many hosts at once and yields the event stream.

    engine = Engine(runbook, inventory, transport, state, feeds_state=False)
    async for batch in engine.run(steps, action="verify"):
        store.append_many(batch)      # durable first (the store feeds `state`) ...
        render(batch)                 # ... then shown

The engine never reads an event back before it is durable: an event changes
the state only once its batch has been taken by the consumer (who writes it
to disk before asking for the next), and the engine waits for that
(`_settle`) before reading any status to decide what to run next. Statuses
are the rulebook's (run/rules.py); the engine only asks.

Verify runs on the targeted hosts (resume semantics: hosts already satisfied
with an unchanged definition are not re-run unless `again`); apply runs only on
hosts whose verify failed, after a confirmation, records `before`, performs the
pending action (`then: reboot`) and verifies again; rollback restores the
recorded `before` values. Results are taken as they arrive, so a slow host
never holds up the others; fleet checks (consistency, fleet design) are judged
once every host of the step has answered.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from ..criteria.design import is_fleet_check
from ..criteria.fleet import judge_fleet
from ..definition.model import Inventory, Runbook, Status, Step
from ..definition.targets import targets
from ..inventory.load import fold, host_vars
from ..run import rules
from ..run.events import (
    Event,
    HostFinished,
    HostOutput,
    HostStarted,
    OperatorDecision,
    PendingActionChanged,
    RunInterrupted,
    StepFinished,
    StepStarted,
)
from ..run.state import RunState
from . import become, detached
from .approval import approval_reason
from .batchrun import batching_enabled
from .hostrun import HostOutcome, command_for, run_on_host
from .pacing import start_paced

Confirm = Callable[[Step, str, list[str], dict[str, str]], Awaitable[bool]]


def has_fleet_checks(step: Step) -> bool:
    if not step.verify:
        return False
    return any(is_fleet_check(c) for c in step.verify.expect)


# A read-only verify whose connection dropped mid-command, or whose handshake
# timed out, is tried this many more times before it is unknown: under load
# both happen to healthy hosts (transport/transport.py, docs/steps.md
# "Retries"). Never apply/rollback, never a detached job (hostrun.py); the step
# kinds (run_on, pairs, launch) are not retried here: run_on falls over to its
# next runner, pairs and launch start servers and jobs.
VERIFY_RETRIES = 3

# A detached job is re-attached (its result read, never restarted) when the host's
# last run of the step did not end with a verdict (engine/detached.py).
DETACHED_RESUME = frozenset({Status.INTERRUPTED, Status.RUNNING, Status.UNKNOWN})


class Engine:
    def __init__(
        self,
        runbook: Runbook,
        inventory: Inventory,
        transport,
        state: RunState,
        *,
        operator: str = "",
        reboot_timeout: float = 900.0,
        stream_output: bool = False,
        record_loader: Callable[[str, str], Any] | None = None,
        feeds_state: bool = True,
        run_id: str = "",
        verify_retries: int = VERIFY_RETRIES,
        batch_verifies: bool | None = None,
    ):
        self.runbook = runbook
        # several ready verifies of a host in one SSH channel (batchrun.py); None: the
        # environment says (RUNBOOK_BATCH_VERIFY=0 turns it off)
        self.batch_verifies = batching_enabled() if batch_verifies is None else batch_verifies
        self.verify_retries = max(0, int(verify_retries))  # `runbook run --verify-retries`
        self.run_id = run_id  # names the node-side job directory of detached commands
        self.inventory = inventory
        self.transport = transport
        self.state = state
        self.operator = operator
        self.reboot_timeout = reboot_timeout
        self.stream_output = stream_output
        self.record_loader = record_loader  # re-derives a record the state no longer holds
        # True: the engine applies each batch to `state` once the consumer has taken
        # it; False: someone else does (the session's store, once it is on disk).
        self.feeds_state = feeds_state
        self.state.manual_steps = {s.id for s in runbook.steps if s.manual}
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._vars = {h: host_vars(inventory, h) for h in inventory.hosts}
        self._targets: dict[str, list[str]] = {}
        self._records: dict[tuple[str, str], Any] = {}  # records re-parsed from stored output
        self._in_flight: dict[tuple[str, str], HostStarted] = {}
        self._emitted = self._taken = 0
        # (count to be taken, order, future) of each _settle waiting, soonest first: a
        # batch taken wakes only those it satisfies (one Event woke every waiting host
        # at every batch: hosts x batches on a large pipelined run)
        self._settling: list[tuple[int, int, asyncio.Future]] = []
        self._settle_order = itertools.count()
        # a stop ends detached jobs on the nodes unless the client leaves them running
        self.leave_detached_running = False

    # --- plumbing ------------------------------------------------------
    def _emit(self, ev: Event) -> None:
        if isinstance(ev, HostStarted):
            self._in_flight[(ev.step_id, ev.host)] = ev
        elif isinstance(ev, HostFinished):
            self._in_flight.pop((ev.step_id, ev.host), None)
        if not isinstance(ev, HostOutput):
            self._emitted += 1
        self._queue.put_nowait(ev)

    def _taken_by_consumer(self, batch: list[Event]) -> None:
        durable = [e for e in batch if not isinstance(e, HostOutput)]
        if self.feeds_state:
            for e in durable:
                self.state.apply(e)
        self._taken += len(durable)
        waiting = self._settling
        while waiting and waiting[0][0] <= self._taken:
            fut = heapq.heappop(waiting)[2]
            if not fut.done():  # a cancelled waiter's future is done already
                fut.set_result(None)

    async def _settle(self) -> None:
        """Wait until every event emitted so far is in the state (durable). Events
        emitted meanwhile (other hosts go on) are not waited for: the queue is in
        order, so the count taken says which are in."""
        target = self._emitted
        if self._taken >= target:
            return
        fut = asyncio.get_running_loop().create_future()
        heapq.heappush(self._settling, (target, next(self._settle_order), fut))
        await fut

    async def run(
        self,
        steps: list[Step],
        action: str = "verify",
        *,
        hosts: list[str] | None = None,
        again: bool = False,
        rerun_failed: bool = False,
        confirm: Confirm | None = None,
    ) -> AsyncIterator[list[Event]]:
        """Yield batches of events until the work is done (or cancelled)."""
        worker = asyncio.create_task(self._work(steps, action, hosts, again, rerun_failed, confirm))
        worker.add_done_callback(lambda _t: self._queue.put_nowait(None))
        finished = False
        try:
            while not finished:
                batch = [await self._queue.get()]
                while not self._queue.empty():
                    batch.append(self._queue.get_nowait())
                if batch[-1] is None:
                    finished = True
                    batch.pop()
                if batch:
                    yield batch
                    self._taken_by_consumer(batch)
            if not worker.cancelled() and worker.exception():
                raise worker.exception()
        finally:
            if not worker.done():
                worker.cancel()
                try:
                    await worker
                except (asyncio.CancelledError, Exception):
                    pass

    def drain(self) -> list[Event]:
        """Events still queued after the run was cancelled (the in-flight hosts
        recorded as interrupted): the caller persists them too."""
        out = []
        while not self._queue.empty():
            ev = self._queue.get_nowait()
            if ev is not None:
                out.append(ev)
        self._taken_by_consumer(out)
        return out

    async def _work(self, steps, action, hosts, again, rerun_failed, confirm) -> None:
        try:
            if action == "verify":
                await self._verify_all(steps, hosts, again, rerun_failed)
                return
            for step in steps:
                if step.manual:
                    continue
                await self._settle()
                if action == "verify":
                    await self._verify(step, self._select(step, hosts, again, rerun_failed))
                elif action == "apply":
                    await self._fix(step, hosts, again, rerun_failed, confirm)
                elif action == "rollback":
                    await self._rollback(step, hosts, confirm)
                else:
                    raise ValueError(f"unknown action {action!r}")
        except asyncio.CancelledError:
            await detached.end_in_flight(self, "stopped by the operator")  # docs/long-running-steps.md
            self._interrupt_running("stopped by the operator")
            raise

    async def _verify_all(self, steps: list[Step], hosts, again: bool, rerun_failed: bool) -> None:
        """Verify: the steps between barriers pipelined, each host on its own
        (scheduler.py); a barrier step, or a lone step, as one piece."""
        from .scheduler import Pipeline, segments

        for segment in segments([s for s in steps if not s.manual]):
            await self._settle()
            if len(segment) == 1:
                step = segment[0]
                await self._verify(step, self._select(step, hosts, again, rerun_failed))
            else:
                await Pipeline(self, segment, lambda s: self._select(s, hosts, again, rerun_failed)).run()

    def _interrupt_running(self, why: str) -> None:
        for (step_id, host), started in list(self._in_flight.items()):
            self._emit(
                HostFinished(
                    step_id,
                    started.action,
                    host,
                    Status.INTERRUPTED.value,
                    f"interrupted: {why}",
                    command=started.command,
                    started=started.time,
                )
            )
        self._emit(RunInterrupted(why))

    def _all_targets(self, step: Step) -> list[str]:
        """Every host the step targets (resolved once: it is asked per batch)."""
        if step.id not in self._targets:
            self._targets[step.id] = targets(step, self.inventory)
        return self._targets[step.id]

    def _limited(self, step: Step, limit: list[str] | None) -> list[str]:
        hosts = self._all_targets(step)
        if limit is None:
            return list(hosts)
        wanted = set(limit)
        return [h for h in hosts if h in wanted]

    def _record(self, step_id: str, host: str) -> Any:
        """Latest verify record of (step, host); re-parsed from the stored output
        when this process did not produce it (resumed runs)."""
        rec = self.state.record(step_id, host)
        if (
            rec is None
            and self.record_loader is not None
            and self.state.raw_status(step_id, host) in (Status.PASS, Status.FAIL)
        ):
            if (step_id, host) not in self._records:
                self._records[(step_id, host)] = self.record_loader(step_id, host)
            rec = self._records[(step_id, host)]
        return rec

    # --- selection -----------------------------------------------------
    def _stale(self, step: Step, host: str) -> bool:
        out = self.state.outcome(step.id, host)
        return bool(
            out
            and rules.stale_reason(
                out.status, out.step_sha256, out.inventory_sha256, step.sha256, self.inventory.sha256
            )
        )

    def _select(self, step: Step, limit, again: bool, rerun_failed: bool) -> list[str]:
        chosen = []
        for h in self._limited(step, limit):
            st = self.state.status(step.id, h)
            if st == Status.SKIPPED:
                continue
            if rerun_failed:
                if st in rules.RERUN:
                    chosen.append(h)
            elif again or st not in rules.SATISFIED or self._stale(step, h):
                chosen.append(h)
        return chosen

    # --- verify --------------------------------------------------------
    async def _verify(self, step: Step, hosts: list[str]) -> None:
        if not hosts or step.verify is None:
            return
        await self._settle()
        if step.kind != "each":  # run_on: one, pairs:, launch: (runbook/engine/kinds/)
            from .kinds import run_kind

            await run_kind(self, step, hosts)
            return
        runnable = []
        gating: dict = {}  # one gating pass (rules.blocked_reason)
        for h in hosts:
            why = rules.blocked_reason(step, h, self.runbook, self.inventory, self.state.status, gating)
            if why:
                self._emit(HostFinished(step.id, "verify", h, Status.BLOCKED.value, why))
            else:
                runnable.append(h)
        self._emit(
            StepStarted(
                step.id, "verify", tuple(runnable), step.sha256, inventory_sha256=self.inventory.sha256
            )
        )
        fleet = has_fleet_checks(step)
        held: dict[str, HostOutcome] = {}
        tasks = await start_paced(lambda h: self._one(step, "verify", step.verify, h), runnable)
        try:
            for fut in asyncio.as_completed(tasks):
                outcome = await fut
                if fleet and outcome.assessed:
                    held[outcome.host] = outcome  # judged with the fleet below
                else:
                    self._finish(step, "verify", outcome)
        except asyncio.CancelledError:
            for t in tasks:
                t.cancel()
            raise
        if held:
            self._judge_fleet(step, held)
        await self._step_finished(step, "verify", hosts)

    async def _one(
        self, step: Step, action_name: str, action, host: str, before: dict | None = None
    ) -> HostOutcome:
        return await run_on_host(
            self.transport,
            host,
            action,
            self._vars[host],
            before=before,
            on_start=lambda cmd: self._emit(HostStarted(step.id, action_name, host, cmd)),
            on_line=self._line_sink(step, action_name, host),
            # (the host's status is asked only for a detached action: it is judged afresh)
            detach_key=(
                (self.run_id, step.id, action_name, self.state.status(step.id, host) in DETACHED_RESUME)
                if getattr(action, "detach", False)
                else None
            ),
            retries=self.verify_retries if action_name == "verify" else 0,
        )

    def _line_sink(self, step: Step, action_name: str, host: str) -> Callable[[str, str], None] | None:
        """Where a command's output lines go while it runs (None: nowhere)."""
        if not self.stream_output:
            return None
        # stream_output may also be a predicate (step_id, host) -> bool asked per line:
        # a UI that shows one host at a time takes that host's lines only.
        wanted = self.stream_output if callable(self.stream_output) else None

        def stream(stream: str, line: str) -> None:
            if wanted is None or wanted(step.id, host):
                self._queue.put_nowait(HostOutput(step.id, action_name, host, stream, line))

        return stream

    def _finish(
        self,
        step: Step,
        action_name: str,
        o: HostOutcome,
        status: Status | None = None,
        reason: str | None = None,
        before: dict | None = None,
    ) -> None:
        self._emit(
            HostFinished(
                step.id,
                action_name,
                o.host,
                (status or o.verdict.status).value,
                o.verdict.reason if reason is None else reason,
                command=o.command,
                exit_status=o.exit_status,
                stdout=o.stdout,
                stderr=o.stderr,
                started=o.started,
                ended=o.ended or time.time(),
                attempt=o.attempts,
                record=o.record if action_name == "verify" else None,
                before=before,
            )
        )

    def _judge_fleet(self, step: Step, held: dict[str, HostOutcome]) -> None:
        # Hosts not re-run this time still vote with their latest recorded evidence.
        all_hosts = self._all_targets(step)
        records = {h: self._record(step.id, h) for h in all_hosts}
        stdouts: dict[str, str] = {}
        verdicts = {}
        from ..criteria.verdict import Verdict

        for h in all_hosts:
            if h in held:
                records[h] = held[h].record
                stdouts[h] = held[h].stdout
                verdicts[h] = held[h].verdict
            elif self.state.raw_status(step.id, h) in (Status.PASS, Status.FAIL) and records[h] is not None:
                verdicts[h] = Verdict(Status.PASS)  # its own per-host verdict is not re-judged here
        judged = judge_fleet(step.verify, verdicts, records, stdouts, self._vars)
        for h, o in held.items():
            o.verdict = judged[h]
            self._finish(step, "verify", o)

    async def _step_finished(self, step: Step, action_name: str, hosts: list[str]) -> None:
        await self._settle()
        now = time.time()
        by: dict[Status, list[str]] = {}
        for h in self._all_targets(step):
            by.setdefault(self.state.status(step.id, h, now), []).append(h)
        statuses = [st for st, hs in by.items() for _ in hs]
        self._emit(
            StepFinished(
                step.id,
                action_name,
                rules.step_status(statuses).value,
                rules.counts(statuses),
                failing=fold(by.get(Status.FAIL, [])),
                unknown=fold(by.get(Status.UNKNOWN, []) + by.get(Status.INTERRUPTED, [])),
                blocked=fold(by.get(Status.BLOCKED, [])),
            )
        )
        if action_name == "verify" and self.record_loader is not None:
            # The step is judged: its parsed records are not needed again unless an
            # apply or rollback of it asks (_record re-parses them from the store).
            # Keeping every one for the whole run held a third of a 384-host run's
            # peak memory (bench/README.md, issue 18 table). The loader's cache
            # goes too, or a later apply would take an older verify's.
            for h in hosts:
                self.state.records.pop((step.id, h), None)
                self._records.pop((step.id, h), None)

    # --- apply ---------------------------------------------------------
    async def _fix(self, step: Step, limit, again: bool, rerun_failed: bool, confirm: Confirm | None) -> None:
        await self._verify(step, self._select(step, limit, again, rerun_failed))
        if step.apply is None:
            return
        await self._settle()
        failing = [h for h in self._limited(step, limit) if self.state.status(step.id, h) == Status.FAIL]
        if not failing:
            return
        commands = {h: self._preview(step, step.apply, h, self._record(step.id, h)) for h in failing}
        if confirm is None or not await confirm(step, "apply", failing, commands):
            self._emit(
                OperatorDecision("decline", step.id, fold(failing), self.operator, "apply not confirmed")
            )
            return
        self._emit(
            OperatorDecision(
                "approve", step.id, fold(failing), self.operator, approval_reason("apply", commands)
            )
        )
        self._emit(
            StepStarted(step.id, "apply", tuple(failing), step.sha256, inventory_sha256=self.inventory.sha256)
        )
        done = await self._act(step, "apply", step.apply, failing, before_from="record")
        done = await self._pending(step, step.apply.then, done)
        await self._step_finished(step, "apply", failing)
        if done:
            await self._verify(step, done)

    def _preview(self, step: Step, action, host: str, before: dict | None) -> str:
        try:
            return command_for(action, self._vars[host], before)
        except Exception as exc:  # shown to the person confirming; the run reports it per host
            return f"<cannot build the command: {exc}>"

    async def _act(self, step: Step, name: str, action, hosts: list[str], before_from: str) -> list[str]:
        """Run apply or rollback; return the hosts where it succeeded."""
        befores = {
            h: (self._record(step.id, h) if before_from == "record" else self.state.before(step.id, h))
            for h in hosts
        }
        tasks = await start_paced(lambda h: self._one(step, name, action, h, befores[h]), hosts)
        ok: list[str] = []
        try:
            for fut in asyncio.as_completed(tasks):
                o = await fut
                succeeded = o.verdict.status == Status.PASS
                if succeeded:
                    ok.append(o.host)
                status, reason = rules.apply_outcome(
                    name, succeeded, o.assessed, action.then, o.verdict.reason
                )
                before = (
                    (befores[o.host] or {})
                    if name == "apply" and succeeded
                    else (befores[o.host] if name == "apply" else None)
                )
                self._finish(step, name, o, status, reason, before=before)
        except asyncio.CancelledError:
            for t in tasks:
                t.cancel()
            raise
        return ok

    async def _pending(self, step: Step, then: str | None, hosts: list[str]) -> list[str]:
        """Carry out `then: reboot`; return the hosts that came back."""
        if then != "reboot" or not hosts:
            return hosts
        for h in hosts:
            self._emit(
                PendingActionChanged(
                    step.id, h, "reboot", "owed", f"{step.id} changed settings that apply at boot"
                )
            )
        back = await asyncio.gather(*(self._reboot(step, h) for h in hosts))
        return [h for h, ok in zip(hosts, back) if ok]

    async def _reboot(self, step: Step, host: str) -> bool:
        await self.transport.reboot(host, become.wrap("reboot", self._vars[host]))
        if await self.transport.wait_back(host, timeout=self.reboot_timeout):
            self._emit(PendingActionChanged(step.id, host, "reboot", "done", "host came back"))
            return True
        self._emit(
            PendingActionChanged(
                step.id, host, "reboot", "failed", f"did not come back within {self.reboot_timeout:.0f}s"
            )
        )
        # still owed: the reboot may not have happened
        self._emit(PendingActionChanged(step.id, host, "reboot", "owed", "reboot sent, host not back yet"))
        return False

    # --- rollback ------------------------------------------------------
    async def _rollback(self, step: Step, limit, confirm: Confirm | None) -> None:
        await detached.end_for_rollback(self, step, self._limited(step, limit), confirm)
        if step.rollback is None:
            return
        await self._settle()
        hosts = [
            h
            for h in self._limited(step, limit)
            if self.state.before(step.id, h) is not None
            and self.state.raw_status(step.id, h) != Status.ROLLED_BACK
        ]
        if not hosts:
            return
        commands = {h: self._preview(step, step.rollback, h, self.state.before(step.id, h)) for h in hosts}
        if confirm is None or not await confirm(step, "rollback", hosts, commands):
            self._emit(
                OperatorDecision("decline", step.id, fold(hosts), self.operator, "rollback not confirmed")
            )
            return
        self._emit(
            OperatorDecision(
                "approve", step.id, fold(hosts), self.operator, approval_reason("rollback", commands)
            )
        )
        self._emit(
            StepStarted(
                step.id, "rollback", tuple(hosts), step.sha256, inventory_sha256=self.inventory.sha256
            )
        )
        done = await self._act(step, "rollback", step.rollback, hosts, before_from="before")
        await self._pending(step, step.rollback.then, done)
        await self._step_finished(step, "rollback", hosts)
