"""What every step kind needs from the engine: the hosts' vars, running one
command, and emitting per-host events."""

from __future__ import annotations

import asyncio
import time
from contextlib import nullcontext
from typing import Any

from ...criteria.host import judge_host, parse_output
from ...criteria.verdict import Verdict
from ...definition.model import Action, Status, Step
from ...definition.template import TemplateError, render_command
from ...inventory.load import select_hosts
from ...run.events import HostFinished, HostStarted, StepStarted
from ...run.rules import SATISFIED, blocked_reason  # the per-host gating by `needs` (run/rules.py)
from ..hostrun import HostOutcome


class Ctx:
    def __init__(self, engine, step: Step, on_host=None):
        self.engine = engine
        self.step = step
        self.on_host = on_host  # host -> async context held while a command runs there
        self.open: set[str] = set()  # hosts started, not yet finished
        self.selected: set[str] = set()  # the hosts this run judges (others only serve as partners)
        self.cancelled = False

    # --- inventory -------------------------------------------------------
    def vars(self, host: str) -> dict[str, Any]:
        return self.engine._vars[host]

    def select(self, selector: str) -> list[str]:
        return select_hosts(self.engine.inventory, selector)

    # --- events ----------------------------------------------------------
    def start(self, hosts: list[str]) -> list[str]:
        """StepStarted; blocked hosts finished as blocked; the rest returned."""
        e, step = self.engine, self.step
        runnable = []
        gating: dict = {}  # one gating pass (run/rules.py blocked_reason)
        for h in hosts:
            why = blocked_reason(step, h, e.runbook, e.inventory, e.state.status, gating)
            if why:
                e._emit(HostFinished(step.id, "verify", h, Status.BLOCKED.value, why))
            else:
                runnable.append(h)
        self.selected = set(runnable)
        e._emit(
            StepStarted(step.id, "verify", tuple(runnable), step.sha256, inventory_sha256=e.inventory.sha256)
        )
        return runnable

    def running(self, host: str, command: str) -> None:
        """The host takes part from now on (RUNNING: a kill leaves it interrupted)."""
        if host in self.selected and host not in self.open:
            self.open.add(host)
            self.engine._emit(HostStarted(self.step.id, "verify", host, command))

    def running_as(self, host: str, template: str, on: str, extra: dict[str, Any] | None = None) -> None:
        """`running`, with the command filled in as it runs on `on` (the host itself,
        its pair server, the group's runner or the job's launcher), so the journal
        never shows a `{{ }}`; the template itself if it cannot be filled (the
        error is reported when the command runs)."""
        self.running_as_one_job([host], template, on, extra)

    def running_as_one_job(
        self, hosts: list[str], template: str, on: str, extra: dict[str, Any] | None = None
    ) -> None:
        """running_as for hosts that take part in one command (a launch job, a sweep): the
        command is filled once, and only if a host starts with it. Filled per host,
        a job over every node cost the square of the fleet (each fill holds every
        node's name): 0.8 % of the client's samples in a 1,000-node run."""
        todo = [h for h in hosts if h in self.selected and h not in self.open]
        if not todo:
            return
        try:
            command = self.render(template, on, extra)
        except TemplateError:
            command = template
        for h in todo:
            self.running(h, command)

    def partners(self) -> list[str]:
        """Targets that may take part: the hosts judged now and those already satisfied
        (a blocked or unselected host never serves as a partner)."""
        state = self.engine.state
        return [
            h
            for h in self.engine._all_targets(self.step)
            if h in self.selected or state.status(self.step.id, h) in SATISFIED
        ]

    def finish(
        self,
        host: str,
        status: Status,
        reason: str,
        res: HostOutcome | None = None,
        *,
        via: str = "",
        peer: str = "",
        link: str = "",
        record: Any = None,
        tests: tuple[dict[str, Any], ...] = (),
    ) -> None:
        if host not in self.selected:
            return
        self.open.discard(host)
        stale = getattr(self.engine, "stale", None)
        if stale is not None:
            stale.discard((self.step.id, host))  # fresh evidence now
        r = res
        self.engine._emit(
            HostFinished(
                self.step.id,
                "verify",
                host,
                status.value,
                reason,
                command=r.command if r else "",
                exit_status=r.exit_status if r else None,
                stdout=r.stdout if r else "",
                stderr=r.stderr if r else "",
                started=r.started if r else 0.0,
                ended=(r.ended if r and r.ended else time.time()),
                record=record if record is not None else (r.record if r else None),
                via=via if via != host else "",
                peer=peer,
                link=link,
                tests=tuple(tests),
            )
        )

    def unfinished_unknown(self) -> None:
        for h in sorted(self.open):
            self.finish(h, Status.UNKNOWN, "the step ended without a verdict for this host")

    # --- commands --------------------------------------------------------
    def render(self, template: str, host: str, extra: dict[str, Any] | None = None) -> str:
        values = dict(self.vars(host))
        values.update(extra or {})
        return render_command(template, values)

    async def run(
        self,
        host: str,
        template: str,
        extra: dict[str, Any] | None = None,
        *,
        action: Action | None = None,
        timeout: float | None = None,
        on_line=None,
        judge_vars: dict[str, Any] | None = None,
        wrap=None,
    ) -> HostOutcome:
        """Run a template on `host`; parse and judge with `action` (default: verify).
        `wrap` turns the filled-in command into the text sent (a launch job's
        marker, engine/kinds/launchjob.py); the outcome keeps the command itself."""
        action = action or self.step.verify
        try:
            command = self.render(template, host, extra)
        except TemplateError as exc:
            return HostOutcome(
                host, template, Verdict(Status.UNKNOWN, f"cannot build the command: {exc}"), assessed=False
            )
        try:
            async with self.on_host(host) if self.on_host else nullcontext():
                res = await self.engine.transport.run(
                    host,
                    wrap(command) if wrap else command,
                    timeout=timeout or action.timeout,
                    on_line=on_line,
                )
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        base = dict(
            exit_status=res.exit_status,
            stdout=res.stdout,
            stderr=res.stderr,
            started=res.started,
            ended=res.ended,
            extra={"started_remote": res.started_remote},  # it may have run (and still run) there
        )
        if res.unknown_reason:
            return HostOutcome(
                host,
                command,
                Verdict(Status.UNKNOWN, f"{host}: {res.unknown_reason}"),
                assessed=False,
                **base,
            )
        record, problem = (
            parse_output(action.parse, res.stdout) if res.exit_status == 0 or action.parse else (None, None)
        )
        verdict = judge_host(
            action, res.exit_status, res.stdout, judge_vars or self.vars(host), record, problem
        )
        if verdict.status == Status.FAIL and res.stderr.strip() and res.exit_status not in (0, None):
            verdict.reason += f" — stderr: {res.stderr.strip().splitlines()[-1][:160]}"
        return HostOutcome(host, command, verdict, record=record, **base)
