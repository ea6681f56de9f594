"""A working session on one run: the store, the run state rebuilt from it,
the SSH transport and the engine, wired together. The CLI and the TUI are two
clients of this; neither talks to the store or the transport directly.

Order of truth: a session holds exactly one run state, the store's. Every
event is appended to the store (durably) and only then folded into that state
and handed to the client, so nothing is ever shown that is not on disk, and
the engine reads statuses only from what is (Engine._settle).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import __version__
from ..definition.model import Inventory, Runbook, Step
from ..definition.targets import targets
from ..engine.runner import VERIFY_RETRIES, Confirm, Engine
from ..errors import UsageError
from ..inventory.load import host_vars
from ..run.events import Event, HostKeyRecorded, HostOutput, OperatorDecision, RunFinished
from ..run.state import RunState
from ..store.store import Store, operator_name
from ..transport import Transport
from .connecting import KeyRelay, make_transport
from .engine_thread import EngineThread, ToLoop, confirm_on
from .selection import choose_hosts, choose_steps, first_hosts, site_of  # noqa: F401 (also their home before)

_KeyRelay = KeyRelay  # the names this module had
_transport = make_transport


class Session:
    def __init__(
        self,
        runbook: Runbook,
        inventory: Inventory,
        store: Store,
        state: RunState,
        *,
        operator: str,
        trust_new_hosts: bool = False,
        max_handshakes: int | None = None,
        stream_output: bool = False,
        reboot_timeout: float = 900.0,
        verify_retries: int = VERIFY_RETRIES,
        transport: Transport | None = None,
        key_relay: KeyRelay | None = None,
    ):
        """`transport` and its `key_relay`: made before the store existed (open_connecting)."""
        self.runbook = runbook
        self.inventory = inventory
        self.store = store
        self.state = state
        self.operator = operator
        self.state.manual_steps = {s.id for s in runbook.steps if s.manual}
        self.pinned: list[tuple[str, str]] = []  # (host, fingerprint) pinned by --trust-new-hosts
        if transport is None:
            transport = make_transport(
                inventory, Path(store.directory).parent, trust_new_hosts, max_handshakes, self._host_key
            )
        self.transport = transport
        self.engine = Engine(
            runbook,
            inventory,
            self.transport,
            state,
            operator=operator,
            stream_output=stream_output,
            reboot_timeout=reboot_timeout,
            record_loader=self._record_from_store,
            feeds_state=False,
            run_id=Path(store.directory).name,
            verify_retries=verify_retries,
        )
        self._engine_thread: EngineThread | None = None  # execute_in_thread's, made on first use
        self._summary: tuple[list[Step], list[str] | None, dict] | None = None  # finished_summary's
        self._seen_keys: set[tuple[str, str]] = set()
        self._keys_seen_since_write: list[Event] = []
        if key_relay is not None:
            key_relay.attach(self._host_key)
        self.stale = store.stale_steps({s.id: s.sha256 for s in runbook.steps}, inventory.sha256)

    # --- opening -------------------------------------------------------
    @classmethod
    async def open_connecting(
        cls, runbook: Runbook, inventory: Inventory, state_dir: str | Path, first: list[str], **kw
    ) -> Session:
        """Session.open for a client about to run, connecting to `first` meanwhile
        (workspace/connecting.py)."""
        from .connecting import open_connecting

        return await open_connecting(runbook, inventory, state_dir, first, **kw)

    @staticmethod
    def _create_store(
        runbook: Runbook, inventory: Inventory, state_dir: Path, operator: str, run_id: str | None
    ) -> Store:
        # the run keeps what it runs with: its state stands on its own (recorded while
        # the journal is made, both durable before anything runs)
        return Store.create(
            state_dir,
            run_id,
            site=site_of(inventory),
            operator=operator,
            tool_version=__version__,
            inventory_sha256=inventory.sha256,
            runbook_sha256=runbook.sha256,
            definitions=(runbook, inventory),
        )

    @classmethod
    def open(
        cls,
        runbook: Runbook,
        inventory: Inventory,
        state_dir: str | Path,
        *,
        operator: str | None = None,
        run_id: str | None = None,
        new: bool = False,
        **kw,
    ) -> Session:
        operator = operator_name(operator)
        state_dir = Path(state_dir)
        existing = Store.list_runs(state_dir) if state_dir.exists() else []
        if new or (not existing and run_id is None):
            store = cls._create_store(runbook, inventory, state_dir, operator, run_id)
        else:
            store = Store.open(state_dir, run_id)
            try:  # the run keeps what it runs with: its state stands on its own
                store.record_definitions(runbook, inventory)
            except BaseException:
                store.close()
                raise
        return cls(runbook, inventory, store, store.state, operator=operator, **kw)

    # --- running -------------------------------------------------------
    def steps(self, step_ids: list[str] | None = None, phase: str | None = None) -> list[Step]:
        return choose_steps(self.runbook, step_ids, phase)

    def hosts(self, expr: str | None) -> list[str] | None:
        return choose_hosts(self.inventory, expr)

    async def execute(
        self,
        steps: list[Step],
        action: str = "verify",
        *,
        hosts: list[str] | None = None,
        again: bool = False,
        rerun_failed: bool = False,
        confirm: Confirm | None = None,
        on_events: Callable[[list[Event]], Any] | None = None,
    ) -> None:
        self._summary = None
        batches = self.engine.run(
            steps, action, hosts=hosts, again=again, rerun_failed=rerun_failed, confirm=confirm
        )
        try:
            async for batch in batches:
                await self._deliver(batch, on_events)
            # this piece of work is done (the log's "ended"; a later run goes on from here)
            from ..run.summary import run_summary

            summary = run_summary(self.state, steps, self.inventory, hosts, with_exit_code=True)
            await self._deliver([RunFinished(summary["status"])], on_events)
            self._summary = (steps, hosts, summary)
        except BaseException:
            # Stopped (Ctrl-C, `x`) or failed: stop the engine (it records the
            # in-flight commands as interrupted), then persist what it said on the
            # way out, so nothing is lost and the next run starts from a clean queue.
            await batches.aclose()
            rest = self.engine.drain()
            if rest:
                try:
                    await self._deliver(rest, on_events)
                except Exception:  # the first error is the one to report
                    pass
            raise

    def finished_summary(self, steps: list[Step], hosts: list[str] | None) -> dict | None:
        """The summary (run/summary.py, with the exit code) the last execute() of
        these steps and hosts judged its RunFinished by, when it ran to its end:
        what `runbook run` prints, not judged a second time (~0.2 s at 1,000 hosts)."""
        done = self._summary
        if done is None or done[0] is not steps or done[1] != hosts:
            return None
        return done[2]

    async def execute_in_thread(
        self,
        steps: list[Step],
        action: str = "verify",
        *,
        confirm: Confirm | None = None,
        on_events: Callable[[list[Event]], Any] | None = None,
        **kw: Any,
    ) -> None:
        """execute() on the session's own engine thread (workspace/engine_thread.py):
        the transport, the engine and the store's writes and folds run there, so
        the caller's event loop (a UI's) stays free for keys. `on_events` (plain,
        not a coroutine) and `confirm` are called on the caller's loop, in order.
        Cancelling the caller stops the run as in execute() and returns once it is
        recorded. A session that runs this way keeps doing so (its SSH connections
        live on that loop); close() closes them there."""
        if self._engine_thread is None:
            self._engine_thread = EngineThread()
        here = asyncio.get_running_loop()
        relay = ToLoop(here, on_events) if on_events else None
        await self._engine_thread.run(
            self.execute(
                steps,
                action,
                confirm=confirm_on(here, confirm) if confirm else None,
                on_events=relay,
                **kw,
            )
        )
        if relay is not None and relay.error is not None:
            raise relay.error

    async def _deliver(self, batch: list[Event], on_events) -> None:
        # (Parsed records stay out of the journal: the store drops them, they are
        # re-parsed from the output on demand, see _record_from_store.)
        durable = [e for e in batch if not isinstance(e, HostOutput)]
        if self._keys_seen_since_write:  # host keys go down with the batch they came with
            durable = self._keys_seen_since_write + durable
            self._keys_seen_since_write = []
        if durable:
            # On disk before anyone is told (fdatasync per batch and per output blob):
            # done off the event loop, so a UI on this loop stays live meanwhile;
            # then folded into the state here, on the loop, in journal order.
            await asyncio.to_thread(self.store.write_many, durable)
            checkpoint_due = self.store.catch_up(checkpoint=False)
        else:
            checkpoint_due = False
        if on_events:
            result = on_events(batch)
            if inspect.isawaitable(result):
                await result
        if checkpoint_due:
            # The progress database (a checkpoint of the journal, which has it all)
            # is written off the loop too: on a large run it takes a while. The
            # next batch is fed after it (the store's feeding lock).
            await asyncio.wrap_future(self.store.checkpoint_in_background())

    def _append(self, events: list[Event]) -> None:
        # Batches are written from a worker thread while host keys and decisions
        # are written from the loop: the store serialises writers itself (its mutex)
        # and folds what was written into the state in journal order.
        self.store.append_many(events)

    def leave_detached_running(self) -> None:
        """Stopping from now on leaves the detached jobs running on the nodes: the
        process is being terminated or the operator quits, not stopping the work
        (a resume re-attaches; docs/long-running-steps.md)."""
        self.engine.leave_detached_running = True

    def detached_job(self, step_id: str, host: str | None) -> tuple[float, float | None] | None:
        """(started, expected seconds) while the host runs the step's detached command,
        else None: the clock the CLI and TUI show (docs/long-running-steps.md)."""
        from ..definition.model import Status
        from ..engine.detached import expected_seconds

        out = self.state.outcome(step_id, host) if host else None
        if out is None or out.status != Status.RUNNING:
            return None
        try:
            action = getattr(self.runbook.step(step_id), out.action, None)
        except KeyError:
            return None
        if action is None or not getattr(action, "detach", False) or host not in self.inventory.hosts:
            return None
        return out.started, expected_seconds(action, host_vars(self.inventory, host))

    def stream_only(self, wanted: Callable[[str, str], bool]) -> None:
        """When this session streams output lines, stream those of the (step, host)
        pairs `wanted` accepts only (a UI that shows one host at a time)."""
        if self.engine.stream_output:
            self.engine.stream_output = wanted

    def decide(
        self, kind: str, step_id: str, hosts: str, reason: str, expires: float | None = None
    ) -> OperatorDecision:
        if not reason or not reason.strip():
            raise UsageError(f"{kind} needs a reason (--reason TEXT)")
        try:
            step = self.runbook.step(step_id)
        except KeyError:
            raise UsageError(f"unknown step {step_id!r}") from None
        if hosts:
            chosen = set(self.hosts(hosts) or [])
            outside = chosen - set(targets(step, self.inventory))
            if outside:
                from ..inventory.load import fold

                raise UsageError(f"{fold(sorted(outside))} not targeted by step {step_id}")
        ev = OperatorDecision(kind, step_id, hosts or "", self.operator, reason.strip(), expires)
        self._append([ev])
        return ev

    def _record_from_store(self, step_id: str, host: str):
        """The parsed record of a verify recorded earlier (in a previous process):
        re-read its output from the store and parse it again."""
        from ..criteria.host import parse_output

        try:
            step = self.runbook.step(step_id)
        except KeyError:
            return None
        if step.verify is None or not step.verify.parse:
            return None
        text = self.store.verify_output(step_id, host)
        if text is None:
            return None
        record, _problem = parse_output(step.verify.parse, text)
        return record

    def _host_key(self, host: str, fingerprint: str, how: str) -> None:
        if (host, fingerprint) in self._seen_keys:
            return
        self._seen_keys.add((host, fingerprint))
        if how == "pinned":
            self.pinned.append((host, fingerprint))
        # Recorded with the next batch of results (one fsync for a thousand first
        # connections, not one each on the event loop), or at close.
        self._keys_seen_since_write.append(HostKeyRecorded(host, fingerprint, how))

    def close_store(self) -> None:
        """Write what is still held back (host keys), then release the store."""
        if self._keys_seen_since_write:
            self._append(self._keys_seen_since_write)
            self._keys_seen_since_write = []
        self.store.close()

    async def close(self) -> None:
        try:
            if self._engine_thread is not None:  # a run left going is stopped (and recorded)
                # first; the connections live on its loop: closed there
                await self._engine_thread.close(self.transport.close())
            else:
                await self.transport.close()
        finally:
            self.close_store()
