"""What the keys of the main screen do: run a step (in a worker, so the UI
stays live), confirm apply/rollback, record skip/waive/note, export, stop,
quit. Mixed into `MainScreen`, which provides the layout and `session`."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual import work
from textual.worker import Worker, WorkerState

from ...definition.model import Step
from ...errors import RunbookError
from .. import heap
from ..runview import folded, restored_values
from .confirm import ConfirmScreen
from .export import ExportAsked, ExportScreen
from .help import HelpScreen
from .quit import QuitScreen
from .reason import ReasonGiven, ReasonScreen

RUN_GROUP = "run"


def _no_passphrase(path: str) -> str:
    from ...export.signing_keys import SigningError

    raise SigningError(
        f"{path} is encrypted: add it to ssh-agent (ssh-add {path}) and export again; "
        "the TUI does not read passphrases"
    )


class MainActions:
    session: Any
    step_id: str | None
    view: Any  # RunView
    _asked: bool = False  # did the engine ask to confirm during this run?

    # --- running ------------------------------------------------------------
    def running(self) -> list[Worker]:
        return [
            w
            for w in self.workers
            if w.group == RUN_GROUP and w.state in (WorkerState.PENDING, WorkerState.RUNNING)
        ]

    def _start(
        self, action: str, *, hosts: list[str] | None = None, again: bool = False, rerun_failed: bool = False
    ) -> Worker | None:
        if self.step_id is None:
            return None
        if self.running():
            self.notify("a run is already going: wait for it, or stop it (x)", severity="warning")
            return None
        step: Step = self.session.runbook.step(self.step_id)
        if step.manual:
            self.notify(f"{step.id} is a manual step: check it, then confirm it with a note (n)")
            return None
        if action != "verify" and getattr(step, action) is None:
            self.notify(f"{step.id} has no {action}", severity="warning")
            return None
        self.action_dismiss_notice()
        self._asked = False
        return self.run_steps([step], action, hosts, again, rerun_failed)

    @work(exclusive=True, group=RUN_GROUP, exit_on_error=False)
    async def run_steps(
        self, steps: list[Step], action: str, hosts: list[str] | None, again: bool, rerun_failed: bool
    ) -> None:
        # The engine on its own thread when the session has one (workspace/engine_thread.py):
        # this loop then only handles keys and draws while 1,000 hosts answer.
        execute = getattr(self.session, "execute_in_thread", None) or self.session.execute
        try:
            await execute(
                steps,
                action,
                hosts=hosts,
                again=again,
                rerun_failed=rerun_failed,
                confirm=self.confirm,
                on_events=self.on_events,
            )
        finally:
            self.feed.stop()
            self._said += self.announcer.flush()
            self.repaint(steps=tuple(s.id for s in steps))
            heap.settle()  # the run's results join the frozen heap (tui/heap.py)
        if action in ("apply", "rollback") and not self._asked:
            why = "no host fails verify" if action == "apply" else "no apply was recorded on these hosts"
            self.notify(f"nothing to {action} on {steps[0].id}: {why}")

    def action_reverify_interrupted(self) -> None:
        """Resume: verify again, in each step, the hosts whose command was cut off."""
        interrupted = self.view.interrupted()
        if not interrupted:
            self.notify("nothing was interrupted")
            return
        if self.running():
            self.notify("a run is already going: wait for it, or stop it (x)", severity="warning")
            return
        self.action_dismiss_notice()
        self._asked = True  # verify only: nothing to confirm
        steps = [self.session.runbook.step(s) for s in interrupted]
        hosts = sorted({h for hs in interrupted.values() for h in hs})
        self.go_to_step(steps[0].id)
        self.run_steps(steps, "verify", hosts, False, False)

    def action_verify(self) -> None:
        self._start("verify", again=True)

    def action_verify_phase(self) -> None:
        """Every step of the selected step's phase, on the hosts not yet passed."""
        if self.step_id is not None:
            self._run_many(self.session.steps(phase=self.session.runbook.step(self.step_id).phase))

    def action_verify_rest(self) -> None:
        """The whole runbook, top to bottom, on what has not passed yet (resume)."""
        self._run_many(self.session.steps())

    def _run_many(self, steps: list[Step]) -> None:
        if self.running():
            self.notify("a run is already going: wait for it, or stop it (x)", severity="warning")
            return
        self.action_dismiss_notice()
        self._asked = True  # verify only: nothing to confirm
        self.run_steps(steps, "verify", None, False, False)

    def action_verify_host(self) -> None:
        if self.host:
            self._start("verify", hosts=[self.host], again=True)

    def action_rerun_failed(self) -> None:
        self._start("verify", rerun_failed=True)

    def action_apply(self) -> None:
        self._start("apply")

    def action_apply_host(self) -> None:
        if self.host:
            self._start("apply", hosts=[self.host])

    def action_rollback(self) -> None:
        self._start("rollback")

    def action_rollback_host(self) -> None:
        if self.host:
            self._start("rollback", hosts=[self.host])

    async def confirm(self, step: Step, action: str, hosts: list[str], commands: dict[str, str]) -> bool:
        """The engine's confirm callback: a modal with the exact commands; False unless answered yes."""
        self._asked = True
        state = self.session.state
        befores = (
            {h: restored_values(step, state.before(step.id, h)) for h in hosts}
            if action == "rollback"
            else None
        )
        act = getattr(step, action, None)
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        screen = ConfirmScreen(
            action, step.id, step.title, hosts, commands, befores=befores, then=act.then if act else None
        )

        def answered(yes: bool | None) -> None:
            if not answer.done():
                answer.set_result(bool(yes))

        self.app.push_screen(screen, answered)
        try:
            return await answer
        finally:
            # The run was stopped while asking: take the question away (only if it is on
            # top; under the quit question the app is closing anyway).
            if not answer.done() and self.app.screen is screen:
                screen.dismiss(False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place worker failures are reported (none ends the app)."""
        worker = event.worker
        if event.state == WorkerState.ERROR:
            error = worker.error
            message = str(error) if isinstance(error, RunbookError) else f"{type(error).__name__}: {error}"
            self.notify(message, title=f"{worker.name} failed", severity="error", timeout=10)
        elif event.state == WorkerState.CANCELLED and worker.group == RUN_GROUP:
            self.notify(
                "stopped: hosts that were running are recorded as interrupted; f re-runs them",
                severity="warning",
            )

    def _announce(self) -> None:
        said, self._said = self._said, []
        for a in said:
            self.notify(a.message, title=a.title, severity=a.severity, timeout=6)

    def action_stop(self) -> None:
        running = self.running()
        if not running:
            self.notify("nothing is running")
        for w in running:
            w.cancel()

    # --- skip / waive / note ---------------------------------------------------
    def action_decide(self, kind: str) -> None:
        if self.step_id is None:
            return
        hosts = ""
        if kind == "waive":
            # Only what fails is proposed: an unknown or interrupted host has not been judged,
            # so waiving it would accept a result nobody has seen (it can still be typed in).
            statuses = self.view.statuses(self.step_id)
            hosts = folded([h for h, st in statuses.items() if st == "fail"])
        self.app.push_screen(ReasonScreen(kind, self.step_id, hosts, blink=self.blink), self.record_decision)

    def record_decision(self, given: ReasonGiven | None) -> None:
        if given is None or self.step_id is None:
            return
        expires = time.time() + given.expires_days * 86400 if given.expires_days else None
        try:
            ev = self.session.decide(given.kind, self.step_id, given.hosts, given.reason, expires)
        except RunbookError as exc:
            self.notify(str(exc), title=f"{given.kind} not recorded", severity="error")
            return
        self.feed.changes.decisions.append(ev)
        self.repaint()
        until = f" until {time.strftime('%Y-%m-%d %H:%M', time.localtime(expires))}" if expires else ""
        self.notify(f"{given.kind} recorded for {ev.step_id} on {ev.hosts or 'all its hosts'}{until}")

    # --- export ----------------------------------------------------------------
    def action_export(self) -> None:
        if self.running():
            self.notify("a run is going: export when it is over (or stop it with x)", severity="warning")
            return
        try:
            from ...export import export_run
        except ImportError as exc:
            self.notify(f"export is not available in this installation ({exc})", severity="error")
            return
        run_id = str(self.session.state.run.get("run_id") or "run")
        default = self.export_output or f"completion-log-{re.sub(r'[^A-Za-z0-9._-]+', '_', run_id)}.json"

        def asked(answer: ExportAsked | None) -> None:
            if answer is not None:
                self.export_log(answer, export_run)

        self.app.push_screen(ExportScreen(default, self.export_key or "", blink=self.blink), asked)

    @work(exclusive=True, group="export", exit_on_error=False, name="export")
    async def export_log(self, asked: ExportAsked, export_run: Callable[..., Any]) -> None:
        session = self.session
        snapshot = session.store.snapshot(session.runbook, session.inventory)  # on the UI loop: one owner
        # Signing may talk to ssh-agent; keep it off the UI loop. It only reads the snapshot.
        result = await asyncio.to_thread(
            export_run,
            snapshot,
            Path(asked.output),
            sign_key=asked.sign_key,
            identity=asked.identity,
            passphrase_cb=_no_passphrase,
        )
        for warning in result.warnings:
            self.notify(warning, severity="warning")
        self.notify(
            f"{result.log}\n{result.signature}\n{result.markdown}\n{result.html}\n"
            f"signed by {result.identity} ({result.fingerprint})",
            title="completion log exported",
            timeout=12,
        )

    # --- help / quit -------------------------------------------------------------
    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(self.HELP_ROWS))

    def action_quit(self) -> None:
        running = self.running()
        if not running:
            self.app.exit()
            return
        question = (
            "Commands are running.\nQuit anyway? Every finished result is saved; "
            "hosts still running are recorded as interrupted and re-run with f next time."
        )
        self.app.push_screen(QuitScreen(question, self.quit_progress), self._quit_answered)

    def quit_progress(self) -> str:
        """Drawn live in the quit question: how far the run is, which hosts quitting cuts off."""
        if not self.running():
            return "now: the run has finished; quitting interrupts nothing"
        steps = self.feed.running_steps()
        if not steps:
            return "now: starting"
        running = sorted(
            {h for p in steps for h, st in self.view.statuses(p.step_id).items() if st == "running"}
        )
        still = f" · still running on {folded(running)}" if running else ""
        return f"now: {self.feed.activity()}{still}"

    def _quit_answered(self, yes: bool | None) -> None:
        if yes:
            self.stop_then_exit()

    @work(group="quit", exit_on_error=False)
    async def stop_then_exit(self) -> None:
        self.session.leave_detached_running()  # quitting is not `x`: long jobs go on, resume re-attaches
        for w in self.running():
            w.cancel()
            try:
                await w.wait()
            except Exception:
                pass
        self.app.exit()
