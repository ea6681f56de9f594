"""The engine: runs steps on many hosts at once and yields the event stream.

    engine = Engine(runbook, inventory, transport, state)
    async for batch in engine.run(steps, action="verify"):
        store.append_many(batch)      # durable first ...
        render(batch)                 # ... then shown

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
import time
from typing import Any, AsyncIterator, Awaitable, Callable

from ..criteria.fleet import judge_fleet
from ..criteria.design import is_fleet_check
from ..inventory.load import fold, host_vars
from ..definition.model import SATISFIED, Inventory, Runbook, Status, Step
from ..run.state import RunState
from ..run.events import (Event, HostFinished, HostOutput, HostStarted, OperatorDecision,
                     PendingActionChanged, RunInterrupted, StepFinished, StepStarted)
from .hostrun import HostOutcome, command_for, run_on_host
from .targets import blocked_reason, targets

Confirm = Callable[[Step, str, list[str], dict[str, str]], Awaitable[bool]]
RERUN = frozenset({Status.FAIL, Status.UNKNOWN, Status.INTERRUPTED, Status.BLOCKED})


def has_fleet_checks(step: Step) -> bool:
    if not step.verify:
        return False
    return any(is_fleet_check(c) for c in step.verify.expect)


class Engine:
    def __init__(self, runbook: Runbook, inventory: Inventory, transport, state: RunState, *,
                 operator: str = "", reboot_timeout: float = 900.0, stream_output: bool = False,
                 record_loader: Callable[[str, str], Any] | None = None):
        self.runbook = runbook
        self.inventory = inventory
        self.transport = transport
        self.state = state
        self.operator = operator
        self.reboot_timeout = reboot_timeout
        self.stream_output = stream_output
        self.record_loader = record_loader  # re-derives a record the state no longer holds
        self.state.manual_steps = {s.id for s in runbook.steps if s.manual}
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._vars = {h: host_vars(inventory, h) for h in inventory.hosts}
        # (step, host) whose recorded results were made with another step
        # definition or inventory: re-verified, never trusted (set by the session).
        self.stale: set[tuple[str, str]] = set()
        self._targets: dict[str, list[str]] = {}

    # --- plumbing ------------------------------------------------------
    def _emit(self, ev: Event) -> None:
        if not isinstance(ev, HostOutput):
            self.state.apply(ev)
        self._queue.put_nowait(ev)

    async def run(self, steps: list[Step], action: str = "verify", *, hosts: list[str] | None = None,
                  again: bool = False, rerun_failed: bool = False,
                  confirm: Confirm | None = None) -> AsyncIterator[list[Event]]:
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
        return out

    async def _work(self, steps, action, hosts, again, rerun_failed, confirm) -> None:
        try:
            for step in steps:
                if step.manual:
                    continue
                if action == "verify":
                    await self._verify(step, self._select(step, hosts, again, rerun_failed))
                elif action == "apply":
                    await self._fix(step, hosts, again, rerun_failed, confirm)
                elif action == "rollback":
                    await self._rollback(step, hosts, confirm)
                else:
                    raise ValueError(f"unknown action {action!r}")
        except asyncio.CancelledError:
            self._interrupt_running("stopped by the operator")
            raise

    def _interrupt_running(self, why: str) -> None:
        for (step_id, host), out in list(self.state.outcomes.items()):
            if out.status == Status.RUNNING:
                self._emit(HostFinished(step_id, out.action, host, Status.INTERRUPTED.value,
                                        f"interrupted: {why}", command=out.command, started=out.started))
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
        if rec is None and self.record_loader is not None and \
                self.state.raw_status(step_id, host) in (Status.PASS, Status.FAIL):
            rec = self.record_loader(step_id, host)
            if rec is not None:
                self.state.records[(step_id, host)] = rec
        return rec

    # --- selection -----------------------------------------------------
    def _stale(self, step: Step, host: str) -> bool:
        if (step.id, host) in self.stale:
            return True
        out = self.state.outcome(step.id, host)
        return bool(out and out.step_sha256 and out.step_sha256 != step.sha256)

    def _select(self, step: Step, limit, again: bool, rerun_failed: bool) -> list[str]:
        chosen = []
        for h in self._limited(step, limit):
            st = self.state.status(step.id, h)
            if st == Status.SKIPPED:
                continue
            if rerun_failed:
                if st in RERUN:
                    chosen.append(h)
            elif again or st not in SATISFIED or self._stale(step, h):
                chosen.append(h)
        return chosen

    # --- verify --------------------------------------------------------
    async def _verify(self, step: Step, hosts: list[str]) -> None:
        if not hosts or step.verify is None:
            return
        if step.kind != "each":  # run_on: one, pairs:, launch: (runbook/engine/kinds/)
            from .kinds import run_kind

            await run_kind(self, step, hosts)
            return
        runnable = []
        for h in hosts:
            why = blocked_reason(step, h, self.runbook, self.inventory, self.state.status)
            if why:
                self._emit(HostFinished(step.id, "verify", h, Status.BLOCKED.value, why))
            else:
                runnable.append(h)
        self._emit(StepStarted(step.id, "verify", tuple(runnable), step.sha256,
                               inventory_sha256=self.inventory.sha256))
        fleet = has_fleet_checks(step)
        held: dict[str, HostOutcome] = {}
        tasks = [asyncio.create_task(self._one(step, "verify", step.verify, h)) for h in runnable]
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
        self._step_finished(step, "verify", hosts)

    async def _one(self, step: Step, action_name: str, action, host: str, before: dict | None = None) -> HostOutcome:
        # stream_output may also be a predicate (step_id, host) -> bool asked per line:
        # a UI that shows one host at a time takes that host's lines only.
        wanted = self.stream_output if callable(self.stream_output) else None

        def stream(stream: str, line: str, _h=host) -> None:
            if wanted is None or wanted(step.id, _h):
                self._queue.put_nowait(HostOutput(step.id, action_name, _h, stream, line))

        on_line = stream if self.stream_output else None
        return await run_on_host(
            self.transport, host, action, self._vars[host], before=before,
            on_start=lambda cmd: self._emit(HostStarted(step.id, action_name, host, cmd)),
            on_line=on_line)

    def _finish(self, step: Step, action_name: str, o: HostOutcome, status: Status | None = None,
                reason: str | None = None, before: dict | None = None) -> None:
        if action_name == "verify":
            self.stale.discard((step.id, o.host))  # fresh evidence now
        self._emit(HostFinished(
            step.id, action_name, o.host, (status or o.verdict.status).value,
            o.verdict.reason if reason is None else reason, command=o.command, exit_status=o.exit_status,
            stdout=o.stdout, stderr=o.stderr, started=o.started, ended=o.ended or time.time(),
            attempt=o.attempts, record=o.record if action_name == "verify" else None, before=before))

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

    def _step_finished(self, step: Step, action_name: str, hosts: list[str]) -> None:
        all_hosts = self._all_targets(step)
        counts: dict[str, int] = {}
        by: dict[Status, list[str]] = {}
        for h in all_hosts:
            st = self.state.status(step.id, h)
            counts[st.value] = counts.get(st.value, 0) + 1
            by.setdefault(st, []).append(h)
        from ..definition.model import step_status

        self._emit(StepFinished(step.id, action_name, step_status([self.state.status(step.id, h) for h in all_hosts]).value,
                                counts, failing=fold(by.get(Status.FAIL, [])),
                                unknown=fold(by.get(Status.UNKNOWN, []) + by.get(Status.INTERRUPTED, [])),
                                blocked=fold(by.get(Status.BLOCKED, []))))

    # --- apply ---------------------------------------------------------
    async def _fix(self, step: Step, limit, again: bool, rerun_failed: bool, confirm: Confirm | None) -> None:
        await self._verify(step, self._select(step, limit, again, rerun_failed))
        if step.apply is None:
            return
        failing = [h for h in self._limited(step, limit)
                   if self.state.status(step.id, h) == Status.FAIL]
        if not failing:
            return
        commands = {h: self._preview(step, step.apply, h, self._record(step.id, h)) for h in failing}
        if confirm is None or not await confirm(step, "apply", failing, commands):
            self._emit(OperatorDecision("decline", step.id, fold(failing), self.operator, "apply not confirmed"))
            return
        self._emit(OperatorDecision("approve", step.id, fold(failing), self.operator,
                                    f"apply confirmed: {step.apply.run}"))
        self._emit(StepStarted(step.id, "apply", tuple(failing), step.sha256,
                               inventory_sha256=self.inventory.sha256))
        done = await self._act(step, "apply", step.apply, failing, before_from="record")
        done = await self._pending(step, step.apply.then, done)
        self._step_finished(step, "apply", failing)
        if done:
            await self._verify(step, done)

    def _preview(self, step: Step, action, host: str, before: dict | None) -> str:
        try:
            return command_for(action, self._vars[host], before)
        except Exception as exc:  # shown to the person confirming; the run reports it per host
            return f"<cannot build the command: {exc}>"

    async def _act(self, step: Step, name: str, action, hosts: list[str], before_from: str) -> list[str]:
        """Run apply or rollback; return the hosts where it succeeded."""
        befores = {h: (self._record(step.id, h) if before_from == "record" else self.state.before(step.id, h))
                   for h in hosts}
        tasks = [asyncio.create_task(self._one(step, name, action, h, befores[h])) for h in hosts]
        ok: list[str] = []
        try:
            for fut in asyncio.as_completed(tasks):
                o = await fut
                if o.verdict.status == Status.PASS:
                    ok.append(o.host)
                    if name == "apply":
                        then = f"; {action.then} owed" if action.then else ""
                        self._finish(step, name, o, Status.PENDING, f"applied{then}; re-verify pending",
                                     before=befores[o.host] or {})
                    else:
                        self._finish(step, name, o, Status.ROLLED_BACK, "rolled back to the recorded values")
                else:
                    status = Status.UNKNOWN if not o.assessed else Status.FAIL
                    self._finish(step, name, o, status, f"{name} failed: {o.verdict.reason}",
                                 before=befores[o.host] if name == "apply" else None)
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
            self._emit(PendingActionChanged(step.id, h, "reboot", "owed", f"{step.id} changed settings that apply at boot"))
        back = await asyncio.gather(*(self._reboot(step, h) for h in hosts))
        return [h for h, ok in zip(hosts, back) if ok]

    async def _reboot(self, step: Step, host: str) -> bool:
        await self.transport.reboot(host)
        if await self.transport.wait_back(host, timeout=self.reboot_timeout):
            self._emit(PendingActionChanged(step.id, host, "reboot", "done", "host came back"))
            return True
        self._emit(PendingActionChanged(step.id, host, "reboot", "failed",
                                        f"did not come back within {self.reboot_timeout:.0f}s"))
        # still owed: the reboot may not have happened
        self._emit(PendingActionChanged(step.id, host, "reboot", "owed", "reboot sent, host not back yet"))
        return False

    # --- rollback ------------------------------------------------------
    async def _rollback(self, step: Step, limit, confirm: Confirm | None) -> None:
        if step.rollback is None:
            return
        hosts = [h for h in self._limited(step, limit)
                 if self.state.before(step.id, h) is not None
                 and self.state.raw_status(step.id, h) != Status.ROLLED_BACK]
        if not hosts:
            return
        commands = {h: self._preview(step, step.rollback, h, self.state.before(step.id, h)) for h in hosts}
        if confirm is None or not await confirm(step, "rollback", hosts, commands):
            self._emit(OperatorDecision("decline", step.id, fold(hosts), self.operator, "rollback not confirmed"))
            return
        self._emit(OperatorDecision("approve", step.id, fold(hosts), self.operator,
                                    f"rollback confirmed: {step.rollback.run}"))
        self._emit(StepStarted(step.id, "rollback", tuple(hosts), step.sha256,
                               inventory_sha256=self.inventory.sha256))
        done = await self._act(step, "rollback", step.rollback, hosts, before_from="before")
        await self._pending(step, step.rollback.then, done)
        self._step_finished(step, "rollback", hosts)
