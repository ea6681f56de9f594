"""The Store: one run's durable record, and what the engine, CLI, TUI and
exporter ask of it.

    store = Store.create("state", site=..., operator=..., tool_version=...,
                         inventory_sha256=..., runbook_sha256=...)      # appends RunStarted
    store.append_many(batch)          # returns once the batch is on disk (one fdatasync)
    store.close()                     # releases the state directory's lock
    store = Store.open("state")       # the latest run; commands left running -> interrupted
    Store.open("state", read_only=True)   # no lock, no writes (status, export)

Layout on disk: runs.py. Journal and hash chain: journal.py. File format and
durability: storage.py. Outputs: blobs.py. Lock: lock.py. Resume rules:
resume.py. Snapshot keys: snapshot.py.

Statuses are runbook.run.state.RunState's (replayed from the journal, kept
current on append): `host_status` is what the CLI, TUI and export show --
the outcome of the latest verify/apply/rollback, with active skips and
waivers applied (a skip wins over any result; a waiver covers a fail,
unknown, blocked or interrupted result, never a pass; an expired one no
longer counts; a later result is judged afresh against the still-active
decisions). `results()` keeps each result's status as it was recorded.

One process writes a run at a time (the lock); inside it, calls may come
from one thread at a time for reads, appends are serialized.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import zlib
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from pathlib import Path
from typing import Any

from ..run.events import (
    EVENT_TYPES,
    Event,
    HostFinished,
    HostOutput,
    HostStarted,
    OperatorDecision,
    RunFinished,
    RunInterrupted,
    RunStarted,
    StepFinished,
    event_from_dict,
)
from ..run.state import RunState
from . import progress, resume
from .blobs import BlobStore
from .canonical import GENESIS, genesis_of, header_genesis
from .definitions import RunDefinitions
from .errors import NoRun, StoreCorrupt, StoreError, os_errors
from .index import RunIndex
from .journal import Chain, OutputMemo, blob_refs, check_event, make_entry, stored_event
from .lock import StateLock, holder
from .nofollow import DIR_MODE
from .operator import operator_name
from .queries import StoreQueries
from .runs import (
    BLOBS_NAME,
    JOURNAL_NAME,
    RunSummary,
    check_run_id,
    list_runs,
    new_run_id,
    read_header,
    resolve_run,
)
from .storage import (
    FORMAT,
    HEADER_KEY,
    JournalReader,
    JournalWriter,
    create_journal,
    encode_batch,
    fsync_dir,
    prefix_crc,
    read_line,
)

# When the progress database is written: progress.checkpoint_due() -- at once
# after the end of a piece of work or a person's decision (these events), else at
# step boundaries and during long steps, spaced by the checkpoint's own cost.
_CHECKPOINT_NOW = (RunFinished, RunInterrupted, OperatorDecision)
HEAD_NAME = "journal.head"  # the journal's head and count, recorded outside it

__all__ = ["Store", "RunSummary", "operator_name"]


class Store(StoreQueries):
    def __init__(self, directory: Path, *, read_only: bool, lock: StateLock | None = None):
        self.directory = Path(directory)  # the run's directory
        self.path = self.directory / JOURNAL_NAME
        self.read_only = read_only
        self.lock = lock
        self.header: dict[str, Any] = {}
        self._index: RunIndex | None = RunIndex()  # None: build from the journal on first use
        self._blob_refs: list[tuple[str, int, str]] = []  # (sha256, seq, what) of every output in blobs
        self._interrupted_in_memory = False  # read-only: running marked interrupted, not written
        self.state = RunState()  # the store's own view; callers must not feed it
        self.recovered: str | None = None  # what opening had to drop (an unacknowledged write)
        self.came_back: dict[str, list[str]] = {}  # running when the run was reopened
        self._blobs = BlobStore(self.directory / BLOBS_NAME)
        self._writer: JournalWriter | None = None
        self._seq, self._head = 0, GENESIS
        self._stale: dict[str, str] = {}
        self._stale_pairs: set[tuple[str, str]] = set()
        self._mutex = threading.Lock()
        self.progress_path = self.directory / progress.PROGRESS_NAME
        self.progress_note: str | None = None  # why the progress database was rebuilt
        # where the journal ends after the last line fed into the state
        self._fed: dict[str, Any] = {
            "events": 0,
            "head": GENESIS,
            "offset": 0,
            "line": 1,
            "line_start": 0,
            "crc": 0,
        }
        self._line = 1  # journal lines written so far (the header is line 1)
        self._checkpointed_at = (0, 0.0)  # (events, monotonic time) of the last checkpoint
        self._checkpoint_cost = 0.0  # seconds the last checkpoint took to write
        self._checkpointer: ThreadPoolExecutor | None = None  # checkpoint_in_background's thread
        self._docs = progress.ProgressDocs()  # the progress documents, rebuilt as they change
        self._feeding = threading.RLock()  # one feeder at a time keeps the journal order
        # batches durable on disk, not yet in the state: (events, entries, journal position)
        self._unfed: list[tuple[list[Event], list[dict[str, Any]], list[bool], dict[str, Any]]] = []

    # --- opening -------------------------------------------------------
    @classmethod
    def create(
        cls,
        state_dir: str | Path,
        run_id: str | None = None,
        *,
        site: str,
        operator: str,
        tool_version: str,
        inventory_sha256: str,
        runbook_sha256: str,
        definitions: tuple[Any, Any] | None = None,
    ) -> Store:
        """Start a new run (appends RunStarted) and hold the state directory's lock.
        `definitions` (runbook, inventory): recorded in the run (record_definitions) in a
        worker thread while the journal and the first checkpoint are written, their
        fsyncs side by side rather than one after another; both durable on return."""
        state_dir = Path(state_dir)
        with os_errors(state_dir):
            state_dir.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
            lock = StateLock(state_dir)
            lock.acquire()
        try:
            run_id = check_run_id(run_id) if run_id is not None else new_run_id()
            run_dir = state_dir / run_id
            with os_errors(state_dir):
                try:
                    run_dir.mkdir(mode=DIR_MODE)
                except FileExistsError:
                    raise StoreError(
                        f"{run_dir}: run {run_id!r} exists already; open it, or give another run id"
                    ) from None
                fsync_dir(state_dir)
            event, _ = stored_event(
                RunStarted(run_id, site, operator, tool_version, inventory_sha256, runbook_sha256)
            )
            header = {
                HEADER_KEY: FORMAT,
                "run_id": run_id,
                "created": event["time"],
                "tool_version": tool_version,
            }
            recording = _record_alongside(run_dir, definitions) if definitions is not None else None
            try:
                with os_errors(run_dir):
                    create_journal(
                        run_dir / JOURNAL_NAME,
                        header,
                        encode_batch([make_entry(1, header_genesis(header), event)]),
                    )
                    lock.note_run(run_id)
                    store = cls(run_dir, read_only=False, lock=lock)
                    store._load(fresh=True)
                    if store._checkpointed_at[0] != store._fed["events"]:  # (_load wrote it)
                        store.checkpoint()
            except BaseException:
                if recording is not None:  # it writes in the run's directory: done before unlocking
                    futures_wait([recording])
                raise
            if recording is not None:
                try:
                    recording.result()
                except BaseException:
                    store.close()
                    raise
            return store
        except BaseException:
            lock.release()  # (a store that failed to load has no writer yet)
            raise

    @classmethod
    def open(cls, state_dir: str | Path, run_id: str | None = None, *, read_only: bool = False) -> Store:
        """Reopen a run (the latest when run_id is None). For writing, it takes the
        lock, cuts off an unacknowledged last write and records what was interrupted.
        read_only: no lock and no writes; commands left running show as interrupted
        unless another process holds the run open right now."""
        state_dir = Path(state_dir)
        if not state_dir.is_dir():
            raise NoRun(
                f"{state_dir}/: no such state directory: no run has been started here "
                "(`runbook run` starts one)"
            )
        lock = None if read_only else StateLock(state_dir)
        if lock:
            with os_errors(state_dir):
                lock.acquire()
        store = None
        try:
            run_dir = resolve_run(state_dir, run_id)
            with os_errors(run_dir):
                if lock:
                    lock.note_run(run_dir.name)
                store = cls(run_dir, read_only=read_only, lock=lock)
                store._load()
                store._resume()
            return store
        except BaseException:
            if store:
                store.close()  # its journal file and the lock
            elif lock:
                lock.release()
            raise

    @staticmethod
    def list_runs(state_dir: str | Path) -> list[RunSummary]:
        """Every run of the state directory, oldest first (reads only their ends)."""
        return list_runs(state_dir)

    def _load(self, fresh: bool = False) -> None:
        reader = JournalReader(self.path)
        self.header = read_header(self.path)
        chain = Chain(self.path, genesis=genesis_of(self.header))
        restored, recorded = None, []
        if not fresh:
            restored, claimed = self._restore()
            recorded = [r for r in (self._recorded_head(), claimed) if r]
        if restored:
            self.state, self._blob_refs, meta = restored
            self._index = None
            chain.seq, chain.head = meta["events"], meta["head"]
            self._fed = {k: meta[k] for k in self._fed}
            batches = reader.batches(start=meta["offset"], line=meta["line"], crc=meta["crc"])
        else:
            batches = reader.batches()
        checks = {r["events"]: None for r in recorded}
        for line, batch in batches:
            for entry in batch:
                chain.add(entry, line)
                self._replay(entry, line)
                if entry["seq"] in checks:
                    checks[entry["seq"]] = entry["hash"]
            self._fed = {
                "events": chain.seq,
                "head": chain.head,
                "offset": reader.good_end,
                "line": line,
                "line_start": reader.good_end - reader.last_line_size,
                "crc": reader.crc,
            }
        self.header = reader.header
        if chain.seq == 0:
            raise StoreCorrupt(self.path, "the journal has no events (a run starts with RunStarted)")
        for r in recorded:  # (a restored checkpoint was checked against the journal already)
            if not (restored and r["events"] <= meta["events"]):
                self._check_recorded(r, chain.seq, checks[r["events"]])
        self._seq, self._head = chain.seq, chain.head
        self._line, self._crc = self._fed["line"], self._fed["crc"]
        present = self._blobs.names() if self._blob_refs else set()
        for sha, _seq, what in self._blob_refs:
            if sha not in present:
                raise StoreCorrupt(
                    self._blobs.path(sha),
                    f"output blob missing ({what}): the run's blobs/ directory was damaged or partly copied",
                )
        if reader.torn_bytes:
            self.recovered = (
                f"an incomplete last write ({reader.torn_bytes} bytes, line "
                f"{reader.torn_line}) was dropped: it had never been acknowledged"
            )
        if self.progress_note:
            print(
                f"runbook: run {self.directory.name}: the progress database {self.progress_note}; "
                "rebuilt from the journal",
                file=sys.stderr,
            )
        if not self.read_only:
            self._writer = JournalWriter(self.path, reader.good_end)
            if reader.torn_bytes:
                self._writer.truncate(reader.good_end)
            self._blobs.remove_temp()
            if self.progress_note or self._fed["events"] != (meta["events"] if restored else -1):
                self.checkpoint()

    def _restore(self):
        """((state, index, meta) from the progress database when it matches the
        journal, else None with progress_note saying why; and the journal head
        it claims, checked after a full replay when it did not match)."""
        try:
            data = progress.ProgressStorage(self.progress_path).read()
            if data is None:
                self.progress_note = "is missing"
                return None, None
            state, blob_refs, meta = progress.from_data(data)
        except progress.ProgressUnusable as exc:
            self.progress_note = str(exc)
            return None, None
        if meta.get("run_id") != self.directory.name:
            self.progress_note = "belongs to another run"
            return None, None
        batch = read_line(self.path, meta["line_start"], meta["offset"])
        last = batch[-1] if batch else None
        if (
            not (
                isinstance(last, dict)
                and last.get("seq") == meta["events"]
                and last.get("hash") == meta["head"]
            )
            or prefix_crc(self.path, meta["offset"]) != meta["crc"]
        ):
            # the journal decides: a full replay names its damage, or the cut
            self.progress_note = "does not match the journal"
            return None, {"events": meta["events"], "head": meta["head"]}
        return (state, blob_refs, meta), None

    def _recorded_head(self) -> dict[str, Any] | None:
        """The journal head and count recorded outside the journal (HEAD_NAME)."""
        try:
            doc = json.loads((self.directory / HEAD_NAME).read_text())
        except (OSError, ValueError):
            return None
        if isinstance(doc, dict) and isinstance(doc.get("events"), int) and isinstance(doc.get("head"), str):
            return doc
        return None

    def _check_recorded(self, recorded: dict[str, Any], events: int, seen: str | None) -> None:
        want = recorded["events"]
        if events < want:
            missing = f"event {want} is" if want == events + 1 else f"events {events + 1} to {want} are"
            raise StoreCorrupt(
                self.path,
                f"the journal ends at event {events}, but {want} events "
                f"were recorded ({HEAD_NAME}): {missing} missing, the "
                "journal was cut; nothing of this run can be trusted "
                "until it is restored from a copy",
            )
        if seen != recorded["head"]:
            raise StoreCorrupt(
                self.path, f"event {want} is not the one recorded in {HEAD_NAME} (the journal was rewritten)"
            )

    def checkpoint(self) -> None:
        """Write the progress database and the journal's head (atomically), for
        the events fed into the state so far."""
        if self.read_only or self._writer is None:
            return
        with self._feeding:
            began = time.monotonic()
            pos = dict(self._fed, run_id=self.directory.name)
            try:
                progress.ProgressStorage(self.progress_path).write_payload(
                    progress.encode(self.state, self._blob_refs, pos, self._docs)
                )
                progress.write_atomic(
                    self.directory / HEAD_NAME,
                    json.dumps({k: pos[k] for k in ("run_id", "events", "head", "offset")}).encode() + b"\n",
                )
            except OSError as exc:  # the journal has it all: a later checkpoint or a rebuild
                print(
                    f"runbook: could not write the progress database ({exc.strerror}); "
                    "the journal has everything",
                    file=sys.stderr,
                )
            self._checkpointed_at = (pos["events"], time.monotonic())
            self._checkpoint_cost = self._checkpointed_at[1] - began

    def checkpoint_in_background(self) -> Future:
        """checkpoint() on the store's own thread (a UI's event loop does not wait
        for it). Always the same thread: a large run's checkpoint allocates much,
        and the C allocator keeps what a thread freed for that thread to reuse
        (spread over the threads of a pool, the process grows)."""
        if self._checkpointer is None:
            self._checkpointer = ThreadPoolExecutor(1, thread_name_prefix="runbook-checkpoint")
        return self._checkpointer.submit(self.checkpoint)

    def _replay(self, entry: dict[str, Any], line: int) -> None:
        ev = entry["event"]
        if entry["seq"] == 1 and ev.get("type") != "RunStarted":
            raise StoreCorrupt(self.path, f"the first event is {ev.get('type')!r}, not RunStarted", line)
        if ev.get("type") not in EVENT_TYPES:
            raise StoreCorrupt(
                self.path,
                f"event {entry['seq']}: unknown event type {ev.get('type')!r} (written by a newer runbook?)",
                line,
            )
        try:
            self.state.apply(event_from_dict(ev))
            if self._index is not None:
                self._index.add(entry)
            self._blob_refs.extend(_blob_refs(entry))
        except Exception as exc:
            raise StoreCorrupt(
                self.path,
                f"event {entry['seq']} ({ev.get('type')}) does not fit its type: {type(exc).__name__}: {exc}",
                line,
            ) from None

    def _resume(self) -> None:
        running = self.state.running()
        if self.read_only:
            live = holder(self.directory.parent)
            if live and live.get("run") == self.directory.name:
                self.recovered = None  # a live writer's line in progress, not a loss
            elif running:
                self.came_back = running
                self._mark_interrupted()  # in memory only: the writer that had them is gone
            return
        self.came_back = running
        taken = self.lock.taken_over if self.lock else None
        if taken and taken.get("run") not in (None, self.directory.name):
            taken = None  # the dead holder had another run open
        if running or self.recovered:
            self.append(RunInterrupted(resume.interruption_reason(running, self.recovered, taken)))

    def _changed(self, event: Event) -> None:
        if isinstance(event, RunInterrupted):
            self._docs.everything = True  # running -> interrupted, wherever they are
            return
        hit = _affects(event)
        if hit:
            self._docs.changed(*hit)

    def _mark_interrupted(self) -> None:
        self._interrupted_in_memory = True
        self._docs.everything = True
        self.state.mark_interrupted()
        if self._index is not None:
            self._index.mark_interrupted()

    @property
    def index(self) -> RunIndex:
        """The result records (store/index.py), built from the journal on first use
        when the run was opened from its progress database."""
        if self._index is None:
            with self._feeding:
                index = RunIndex()
                for entry in self.iter_journal(upto=self._fed["events"]):
                    index.add(entry)
                if self._interrupted_in_memory:
                    index.mark_interrupted()
                self._index = index
        return self._index

    # --- writing -------------------------------------------------------
    def append(self, event: Event) -> dict[str, Any] | None:
        """Append one event durably; returns its journal entry (None for HostOutput,
        which is live-only: HostFinished carries the whole output)."""
        entries = self.append_many([event])
        return entries[0] if entries else None

    def append_many(self, events: Iterable[Event]) -> list[dict[str, Any]]:
        """Append a batch with one write and one fdatasync; returns only once it is
        on disk, with the state fed."""
        entries = self.write_many(events)
        self.catch_up()
        return entries

    def write_many(self, events: Iterable[Event]) -> list[dict[str, Any]]:
        """Append a batch durably without feeding the state yet (safe from a worker
        thread while another thread reads the state); catch_up() feeds it."""
        events = [e for e in events if not isinstance(e, HostOutput)]
        for e in events:
            if not isinstance(e, Event):
                raise TypeError(f"Store.append takes runbook events, not {type(e).__name__}")
        if not events:
            return []
        if self.read_only or self._writer is None:
            raise StoreError(
                f"{self.path}: this run is open read-only"
                if self.read_only
                else f"{self.path}: the store is closed"
            )
        with self._mutex:
            entries, blobs, memo = [], {}, OutputMemo()
            as_is = []  # the journal holds the event exactly (replayed, it is equal to it)
            seq, prev = self._seq, self._head
            for e in events:
                d, outs = stored_event(e, memo)
                try:
                    check_event(d)
                except ValueError as exc:
                    raise StoreError(
                        f"{self.path}: cannot record {d['type']}: {exc}; nothing was recorded"
                    ) from None
                blobs.update(outs)  # one copy of an output many events share
                seq += 1
                entries.append(make_entry(seq, prev, d))
                prev = entries[-1]["hash"]
                # HostFinished's outputs move to blobs or are cleaned; make_entry may
                # sanitize a value: those are rebuilt from the journal form (_as_stored)
                as_is.append(type(e) is not HostFinished and entries[-1]["event"] is d)
            line = encode_batch(entries)
            line_start = self._writer.end
            if blobs:  # durable before the line that names them
                try:
                    self._blobs.put_many(list(blobs.items()))
                except OSError as exc:
                    raise StoreError(
                        f"{self._blobs.directory}: could not write an output "
                        f"({exc.strerror}); nothing was recorded"
                    ) from None
            self._writer.append(line)
            self._seq, self._head = seq, prev
            self._line += 1
            self._crc = zlib.crc32(line, self._crc)
            self._unfed.append(
                (
                    events,
                    entries,
                    as_is,
                    {
                        "events": seq,
                        "head": prev,
                        "offset": self._writer.end,
                        "line": self._line,
                        "line_start": line_start,
                        "crc": self._crc,
                    },
                )
            )
            return entries

    def catch_up(self, checkpoint: bool = True) -> bool:
        """Feed the state every event written so far, in journal order. Returns
        whether a checkpoint is due; with checkpoint=False it is left to the
        caller (a UI writes it off its event loop: checkpoint_in_background)."""
        with self._feeding:
            with self._mutex:
                written, self._unfed = self._unfed, []
            now = due_step = False
            for events, entries, as_is, position in written:
                for e, entry, same in zip(events, entries, as_is):
                    if self._index is not None:
                        self._index.add(entry)
                    self.state.apply(e if same else _as_stored(e, entry))
                    self._changed(e)
                    self._blob_refs.extend(_blob_refs(entry))
                    now = now or isinstance(e, _CHECKPOINT_NOW)
                    due_step = due_step or isinstance(e, StepFinished)
                self._fed = position
            due = bool(written) and progress.checkpoint_due(
                time.monotonic() - self._checkpointed_at[1],
                self._checkpoint_cost,
                urgent=now,
                step_ended=due_step,
            )
            if due and checkpoint:
                self.checkpoint()
            return due

    def record_definitions(self, runbook: Any, inventory: Any) -> bool:
        """Keep the step definitions and inventory this session runs with in the
        run's directory (definitions.py), before anything runs with them; True
        when they differ from the run's latest version."""
        if self.read_only or self._writer is None:
            raise StoreError(
                f"{self.path}: this run is open read-only"
                if self.read_only
                else f"{self.path}: the store is closed"
            )
        return RunDefinitions(self.directory).record(runbook, inventory)

    def recorded_definitions(self) -> tuple[Any, Any] | None:
        """(Runbook, Inventory) of the run's latest version, rebuilt from its own
        record; None for a run that recorded none."""
        return RunDefinitions(self.directory).current()

    def close(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.shutdown(wait=True)
            self._checkpointer = None
        if self._writer and not self.read_only:
            self.catch_up()
            if self._fed["events"] != self._checkpointed_at[0]:
                self.checkpoint()
        with self._mutex:
            if self._writer:
                self._writer.close()
                self._writer = None
            if self.lock:
                self.lock.release()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _affects(event: Event) -> tuple[str, str | None] | None:
    """The (step, host) -- or the whole step (host None) -- whose progress
    document an event changes; None for none."""
    if isinstance(event, (HostStarted, HostFinished)):
        return event.step_id, event.host
    if isinstance(event, OperatorDecision):
        return event.step_id, None
    return None


def _as_stored(event: Event, entry: dict[str, Any]) -> Event:
    """The event as the journal holds it (what a replay will see), keeping the
    parsed record the journal leaves out (RunState.records is a cache of it)."""
    record = getattr(event, "record", None)
    if record is None:
        return event_from_dict(entry["event"])
    return event_from_dict({**entry["event"], "record": record})  # one build, not two (replace)


def _blob_refs(entry: dict[str, Any]) -> list[tuple[str, int, str]]:
    ev, seq = entry["event"], entry["seq"]
    return [
        (sha, seq, f"{name} of event {seq}: {ev['action']} of step {ev['step_id']} on {ev['host']}")
        for name, sha in blob_refs(ev)
    ]


def _record_alongside(run_dir: Path, definitions: tuple[Any, Any]) -> Future:
    """RunDefinitions(run_dir).record(runbook, inventory) in a worker thread of its own."""
    runbook, inventory = definitions
    pool = ThreadPoolExecutor(1, thread_name_prefix="runbook-definitions")
    try:
        return pool.submit(RunDefinitions(run_dir).record, runbook, inventory)
    finally:
        pool.shutdown(wait=False)
