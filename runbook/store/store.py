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

import threading
from pathlib import Path
from typing import Any, Iterable

from ..run.events import (EVENT_TYPES, Event, HostOutput, RunInterrupted, RunStarted,
                             event_from_dict)
from .canonical import GENESIS
from ..run.state import RunState
from . import resume
from .blobs import BlobStore
from .errors import NoRun, StoreCorrupt, StoreError, os_errors
from .index import RunIndex
from .journal import Chain, check_event, make_entry, stored_event
from .lock import StateLock, holder
from .operator import operator_name
from .queries import StoreQueries
from .runs import (BLOBS_NAME, JOURNAL_NAME, RunSummary, check_run_id, list_runs, new_run_id,
                   resolve_run)
from .storage import (FORMAT, HEADER_KEY, JournalReader, JournalWriter,
                      create_journal, encode_batch, fsync_dir)

__all__ = ["Store", "RunSummary", "operator_name"]


class Store(StoreQueries):
    def __init__(self, directory: Path, *, read_only: bool, lock: StateLock | None = None):
        self.directory = Path(directory)  # the run's directory
        self.path = self.directory / JOURNAL_NAME
        self.read_only = read_only
        self.lock = lock
        self.header: dict[str, Any] = {}
        self.index = RunIndex()
        self.state = RunState()  # the store's own view; callers must not feed it
        self.recovered: str | None = None  # what opening had to drop (an unacknowledged write)
        self.came_back: dict[str, list[str]] = {}  # running when the run was reopened
        self._blobs = BlobStore(self.directory / BLOBS_NAME)
        self._writer: JournalWriter | None = None
        self._seq, self._head = 0, GENESIS
        self._stale: dict[str, str] = {}
        self._stale_pairs: set[tuple[str, str]] = set()
        self._mutex = threading.Lock()
        self._feeding = threading.RLock()  # one feeder at a time keeps the journal order
        self._unfed: list[tuple[Event, dict[str, Any]]] = []  # durable, not yet in the state

    # --- opening -------------------------------------------------------
    @classmethod
    def create(cls, state_dir: str | Path, run_id: str | None = None, *, site: str, operator: str,
               tool_version: str, inventory_sha256: str, runbook_sha256: str) -> "Store":
        """Start a new run (appends RunStarted) and hold the state directory's lock."""
        state_dir = Path(state_dir)
        with os_errors(state_dir):
            state_dir.mkdir(parents=True, exist_ok=True)
            lock = StateLock(state_dir)
            lock.acquire()
        try:
            run_id = check_run_id(run_id) if run_id is not None else new_run_id()
            run_dir = state_dir / run_id
            with os_errors(state_dir):
                try:
                    run_dir.mkdir()
                except FileExistsError:
                    raise StoreError(f"{run_dir}: run {run_id!r} exists already; open it, or "
                                     "give another run id") from None
                fsync_dir(state_dir)
            event, _ = stored_event(RunStarted(run_id, site, operator, tool_version,
                                               inventory_sha256, runbook_sha256))
            header = {HEADER_KEY: FORMAT, "run_id": run_id, "created": event["time"],
                      "tool_version": tool_version}
            with os_errors(run_dir):
                create_journal(run_dir / JOURNAL_NAME, header,
                               encode_batch([make_entry(1, GENESIS, event)]))
                lock.note_run(run_id)
                store = cls(run_dir, read_only=False, lock=lock)
                store._load()
            return store
        except BaseException:
            lock.release()  # (a store that failed to load has no writer yet)
            raise

    @classmethod
    def open(cls, state_dir: str | Path, run_id: str | None = None, *,
             read_only: bool = False) -> "Store":
        """Reopen a run (the latest when run_id is None). For writing, it takes the
        lock, cuts off an unacknowledged last write and records what was interrupted.
        read_only: no lock and no writes; commands left running show as interrupted
        unless another process holds the run open right now."""
        state_dir = Path(state_dir)
        if not state_dir.is_dir():
            raise NoRun(f"{state_dir}/: no such state directory: no run has been started here "
                        "(`runbook run` starts one)")
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

    def _load(self) -> None:
        reader = JournalReader(self.path)
        chain = Chain(self.path)
        for line, batch in reader.batches():
            for entry in batch:
                chain.add(entry, line)
                self._replay(entry, line)
        self.header = reader.header
        if chain.seq == 0:
            raise StoreCorrupt(self.path, "the journal has no events (a run starts with RunStarted)")
        self._seq, self._head = chain.seq, chain.head
        for sha, _seq, what in self.index.blobs:
            if not self._blobs.exists(sha):
                raise StoreCorrupt(self._blobs.path(sha), f"output blob missing ({what}): the run's "
                                                          "blobs/ directory was damaged or partly copied")
        if reader.torn_bytes:
            self.recovered = (f"an incomplete last write ({reader.torn_bytes} bytes, line "
                              f"{reader.torn_line}) was dropped: it had never been acknowledged")
        if not self.read_only:
            self._writer = JournalWriter(self.path, reader.good_end)
            if reader.torn_bytes:
                self._writer.truncate(reader.good_end)
            self._blobs.remove_temp()

    def _replay(self, entry: dict[str, Any], line: int) -> None:
        ev = entry["event"]
        if entry["seq"] == 1 and ev.get("type") != "RunStarted":
            raise StoreCorrupt(self.path, f"the first event is {ev.get('type')!r}, not RunStarted", line)
        if ev.get("type") not in EVENT_TYPES:
            raise StoreCorrupt(self.path, f"event {entry['seq']}: unknown event type "
                                          f"{ev.get('type')!r} (written by a newer runbook?)", line)
        try:
            self.state.apply(event_from_dict(ev))
            self.index.add(entry)
        except Exception as exc:  # noqa: BLE001 - whatever it is, name the event, no traceback
            raise StoreCorrupt(self.path, f"event {entry['seq']} ({ev.get('type')}) does not fit "
                                          f"its type: {type(exc).__name__}: {exc}", line) from None

    def _resume(self) -> None:
        running = self.index.running()
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

    def _mark_interrupted(self) -> None:
        self.state.mark_interrupted()
        self.index.mark_interrupted()

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
            raise StoreError(f"{self.path}: this run is open read-only" if self.read_only
                             else f"{self.path}: the store is closed")
        with self._mutex:
            entries, blobs = [], []
            seq, prev = self._seq, self._head
            for e in events:
                d, outs = stored_event(e)
                try:
                    check_event(d)
                except ValueError as exc:
                    raise StoreError(f"{self.path}: cannot record {d['type']}: {exc}; nothing "
                                     "was recorded") from None
                blobs += outs
                seq += 1
                entries.append(make_entry(seq, prev, d))
                prev = entries[-1]["hash"]
            line = encode_batch(entries)
            if blobs:  # durable before the line that names them
                try:
                    self._blobs.put_many(blobs)
                except OSError as exc:
                    raise StoreError(f"{self._blobs.directory}: could not write an output "
                                     f"({exc.strerror}); nothing was recorded") from None
            self._writer.append(line)
            self._seq, self._head = seq, prev
            self._unfed.extend(zip(events, entries))
            return entries

    def catch_up(self) -> None:
        """Feed the state every event written so far, in journal order."""
        with self._feeding:
            with self._mutex:
                written, self._unfed = self._unfed, []
            for e, entry in written:
                self.index.add(entry)
                self.state.apply(e)

    def close(self) -> None:
        with self._mutex:
            if self._writer:
                self._writer.close()
                self._writer = None
            if self.lock:
                self.lock.release()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
