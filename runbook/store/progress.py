"""The run's progress database: the rulebook's projection of the journal,
persisted as a tinydb database (`<run>/progress.json`) so that reopening a
run reads one file and only the journal lines written after it.

The journal stays the record of truth; this file is a checkpoint of it. It
says which journal head it reflects (event count, head hash, byte offset of
the end of its last line); opening a run checks that the journal holds that
head at that place, loads the checkpoint and applies only the events after
it. When the file is missing, damaged (its checksum), edited, or does not
match the journal, the run is rebuilt from the journal and the user is told
so in one line. Written atomically (ProgressStorage.write_payload) when
checkpoint_due() says so: at step boundaries and every CHECKPOINT_SECONDS
during a long step, further apart when a checkpoint itself is costly. Only
the documents that changed since the last checkpoint are encoded again
(ProgressDocs, encode()): the bytes are those of encoding it whole.

Tables (query them with tinydb's own API, see README.md):
  progress    one document per step x host: status and reason (as judged by
              run/rules.py when written; recorded_status/recorded_reason when
              a decision is on top of the result), action, attempts,
              exit_status, command, started, ended, output_sha256, and the
              step_sha256 / inventory_sha256 it was judged with; before
  decisions   skips, waivers, notes, approvals in journal order
  pending     open pending actions (reboot owed)
  host_keys   one per host
  meta        one document: format, run_id, events, head, offset, line,
              line_start, the run's RunStarted and the rest of the run state

File format: line 1 `{"runbook_progress": 1, "crc32": CRC-32 of line 2}`,
line 2 the tinydb data as one JSON object ({table: {doc_id: document}}).
The CRC catches damage and hand edits (then the run is rebuilt from the
journal); it is no defence against forgery, which the journal's hash chain
and the signed log are for. orjson (a dependency) reads and writes it
(reopening a 100k-event run is dominated by this decode).
"""

from __future__ import annotations

import json
import os
import time
import zlib
from itertools import islice
from pathlib import Path
from typing import Any

from tinydb.storages import Storage

from ..definition.model import Status
from ..inventory.hostsel import unfold
from ..run.state import Decision, Outcome, RunState
from .storage import fsync_dir

PROGRESS_NAME = "progress.json"
HEADER_KEY = "runbook_progress"
FORMAT = 1
CHECKPOINT_SECONDS = 5.0  # during a long step, at least this often
STEP_CHECKPOINT_GAP = 3.0  # at a step boundary, unless one was written this recently
# A checkpoint may cost at most this share of the time between two: on a large
# run (a bigger database to write) they come further apart, the journal having
# everything in between (a resume replays the lines after the last checkpoint).
CHECKPOINT_COST_SHARE = 0.05


def checkpoint_due(since: float, cost: float, *, urgent: bool = False, step_ended: bool = False) -> bool:
    """Whether to write the progress database now: `since` seconds after the
    last checkpoint, which took `cost` seconds to write. `urgent`: a piece of
    work ended or a person decided (written at once); `step_ended`: a step
    boundary was fed (fast steps on many hosts would otherwise pay for a
    rewrite each)."""
    if urgent:
        return True
    spacing = cost / CHECKPOINT_COST_SHARE
    if step_ended and since >= max(STEP_CHECKPOINT_GAP, spacing):
        return True
    return since >= max(CHECKPOINT_SECONDS, spacing)


try:  # orjson, a faster JSON codec; the standard library's where it has no wheel: the same JSON
    import orjson

    _loads = orjson.loads

    def _dumps(data: Any) -> bytes:
        return orjson.dumps(data)
except ImportError:  # pragma: no cover - depends on the machine
    _loads = json.loads

    def _dumps(data: Any) -> bytes:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class ProgressUnusable(Exception):
    """The progress file cannot be used (the message says why); rebuild from the journal."""


class ProgressStorage(Storage):
    """A tinydb Storage for the progress database: reads check the checksum,
    writes go to a temporary file that is fsynced, renamed into place, and the
    directory fsynced, so the file is always either the old or the new one.

        db = TinyDB("state/RUN/progress.json", storage=ProgressStorage)
        db.table("progress").search(where("status") == "fail")
    """

    def __init__(self, path: str | Path, create_dirs: bool = False):
        self.path = Path(path)

    def read(self) -> dict[str, dict[str, Any]] | None:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ProgressUnusable(f"cannot be read ({exc.strerror})") from None
        head, sep, payload = raw.partition(b"\n")
        try:
            header = json.loads(head)
        except ValueError:
            raise ProgressUnusable("is damaged (its first line is not JSON)") from None
        if not isinstance(header, dict) or header.get(HEADER_KEY) != FORMAT:
            raise ProgressUnusable("is not a progress database of this version")
        if not sep or zlib.crc32(payload) != header.get("crc32"):
            raise ProgressUnusable("does not match its checksum (damaged or edited)")
        try:
            data = _loads(payload)
        except ValueError:
            raise ProgressUnusable("is damaged (bad JSON)") from None
        if not isinstance(data, dict):
            raise ProgressUnusable("is damaged (not a database)")
        return data

    def write(self, data: dict[str, dict[str, Any]]) -> None:
        self.write_payload(_dumps(data))

    def write_payload(self, payload: bytes) -> None:
        """Write line 2 already encoded (progress.encode)."""
        header = json.dumps({HEADER_KEY: FORMAT, "crc32": zlib.crc32(payload)})
        write_atomic(self.path, header.encode() + b"\n" + payload)

    def close(self) -> None:
        pass


def write_atomic(path: Path, data: bytes) -> None:
    """temp file, fsync, rename over `path`, fsync the directory."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)


# --- the projection as tinydb data, and back --------------------------------
def _table(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {str(i): d for i, d in enumerate(docs, start=1)}


def progress_doc(state: RunState, step: str, host: str, at: float) -> dict[str, Any]:
    """The `progress` document of one step x host."""
    o = state.outcomes[(step, host)]
    judged = state.judge(step, host, at)
    doc = {
        "step_id": step,
        "host": host,
        "status": judged.status.value,
        "reason": judged.reason,
        "action": o.action,
        "attempts": o.attempts,
        "exit_status": o.exit_status,
        "command": o.command,
        "started": o.started,
        "ended": o.ended,
        "output_sha256": o.output_sha256,
        "step_sha256": o.step_sha256,
        "inventory_sha256": o.inventory_sha256,
    }
    if judged.status != o.status or judged.reason != o.reason:  # a decision is on top
        doc.update(recorded_status=o.status.value, recorded_reason=o.reason)
    before = state.befores.get((step, host))
    if before is not None:
        doc["before"] = before
    return doc


class ProgressDocs:
    """The `progress` documents, rebuilt only for the step x host pairs whose
    result or decisions changed since the last checkpoint (and those under a
    decision with an expiry, whose judgement moves with the clock): a
    checkpoint's cost follows what changed, not the size of the run. Each
    document's encoded form is kept too (`table_parts`): a 1,000-node run's
    table is ~40 MB of JSON, re-encoded whole at every checkpoint before.

    Relies on RunState.outcomes only growing (a pair keeps its place once
    added, none is removed); a state that shrank, or another state object, is
    rebuilt whole."""

    def __init__(self) -> None:
        self.docs: dict[tuple[str, str], dict[str, Any]] = {}
        self.dirty: set[tuple[str, str]] = set()
        self.dirty_steps: set[str] = set()
        self.everything = True
        self._state: RunState | None = None
        self._order: list[tuple[str, str]] = []  # state.outcomes' keys, in its order
        self._place: dict[tuple[str, str], int] = {}  # key -> index in _order
        self._encoded: list[bytes | None] = []  # b'"<doc id>":<document>' per key, None when stale

    def changed(self, step: str, host: str | None = None) -> None:
        if host is None:
            self.dirty_steps.add(step)
        else:
            self.dirty.add((step, host))

    def _refresh(self, state: RunState, at: float) -> None:
        outcomes = state.outcomes
        whole = self.everything or state is not self._state or len(outcomes) < len(self._order)
        if whole:
            self.docs, self._order, self._place, self._encoded = {}, [], {}, []
            self._state = state
        dirty = self.dirty
        for key in islice(outcomes, len(self._order), None):  # pairs added since
            self._place[key] = len(self._order)
            self._order.append(key)
            self._encoded.append(None)
            dirty.add(key)
        steps = self.dirty_steps | {d.step_id for d in state.decisions if d.expires is not None}
        if steps:
            dirty.update(key for key in self._order if key[0] in steps)
        place, encoded, docs = self._place, self._encoded, self.docs
        for key in dirty:
            i = place.get(key)
            if i is not None:
                docs[key] = progress_doc(state, key[0], key[1], at)
                encoded[i] = None
        dirty.clear()
        self.dirty_steps.clear()
        self.everything = False

    def current(self, state: RunState, at: float) -> list[dict[str, Any]]:
        self._refresh(state, at)
        return [self.docs[key] for key in self._order]

    def table_parts(self, state: RunState, at: float) -> list[bytes]:
        """The members of the `progress` table as _dumps writes `_table(current(...))`
        (each after its comma), encoding only the documents that changed since."""
        self._refresh(state, at)
        encoded, docs = self._encoded, self.docs
        for i, key in enumerate(self._order):
            if encoded[i] is None:
                encoded[i] = b'%s"%d":%b' % (b"," if i else b"", i + 1, _dumps(docs[key]))
        return encoded  # type: ignore[return-value]


def to_data(
    state: RunState,
    blob_refs: list[tuple[str, int, str]],
    position: dict[str, Any],
    at: float | None = None,
    docs: ProgressDocs | None = None,
) -> dict[str, dict[str, Any]]:
    """The projection as tinydb data. `position`: run_id, events, head, offset,
    line and line_start (the journal line the last event is on)."""
    at = time.time() if at is None else at
    progress = (docs or ProgressDocs()).current(state, at)
    meta, rest = _meta_and_rest(state, blob_refs, position, at)
    return {"meta": {"1": meta}, "progress": _table(progress), **rest}


def encode(
    state: RunState,
    blob_refs: list[tuple[str, int, str]],
    position: dict[str, Any],
    docs: ProgressDocs,
    at: float | None = None,
) -> bytes:
    """_dumps(to_data(...)), the same bytes, with the `progress` table from the
    documents' kept encodings (ProgressDocs.table_parts), in one copy."""
    at = time.time() if at is None else at
    table = docs.table_parts(state, at)
    meta, rest = _meta_and_rest(state, blob_refs, position, at)
    parts = [b'{"meta":', _dumps({"1": meta}), b',"progress":{', *table, b"}"]
    for name, value in rest.items():
        parts += [b',"%s":' % name.encode(), _dumps(value)]
    parts.append(b"}")
    return b"".join(parts)


def _meta_and_rest(
    state: RunState, blob_refs: list[tuple[str, int, str]], position: dict[str, Any], at: float
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The meta document, and the tables after `progress` (decisions, pending, host_keys)."""
    decisions = [d.as_record() for d in state.decisions]
    meta = dict(
        position,
        format=FORMAT,
        written=at,
        run=state.run,
        finished=state.finished,
        interruptions=state.interruptions,
        step_hashes=state.step_hashes,
        step_inventory=state.step_inventory,
        step_targets={k: list(v) for k, v in state.step_targets.items()},
        blobs=[list(b) for b in blob_refs],
        pending_keys=[list(k) for k in state.pending],
    )
    return meta, {
        "decisions": _table(decisions),
        "pending": _table(list(state.pending.values())),
        "host_keys": _table([dict(v, host=h) for h, v in state.host_keys.items()]),
    }


def from_data(data: dict[str, Any]) -> tuple[RunState, list[tuple[str, int, str]], dict[str, Any]]:
    """The state, the blob references and the journal position (meta) the data
    reflects; ProgressUnusable when it is not a whole projection."""
    try:
        return _from_data(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ProgressUnusable(f"is incomplete ({type(exc).__name__}: {exc})") from None


def _docs(data: dict[str, Any], table: str) -> list[dict[str, Any]]:
    # written as 1..n in order, and JSON objects keep their order when read
    return list(data[table].values())


_STATUS = {s.value: s for s in Status}


def _from_data(data: dict[str, Any]) -> tuple[RunState, list[tuple[str, int, str]], dict[str, Any]]:
    meta = data["meta"]["1"]
    if meta["format"] != FORMAT:
        raise ValueError(f"format {meta['format']!r}")
    state = RunState()
    state.run = meta["run"]
    state.finished = meta["finished"]
    state.interruptions = list(meta["interruptions"])
    state.step_hashes = dict(meta["step_hashes"])
    state.step_inventory = dict(meta["step_inventory"])
    state.step_targets = {k: dict.fromkeys(v) for k, v in meta["step_targets"].items()}
    outcomes, befores, status = state.outcomes, state.befores, _STATUS
    for d in _docs(data, "progress"):
        key = (d["step_id"], d["host"])
        raw = d.get("recorded_status")
        outcomes[key] = Outcome(
            status[raw or d["status"]],
            d["action"],
            d["recorded_reason"] if raw else d["reason"],
            d["exit_status"],
            d["command"],
            d["started"],
            d["ended"],
            d["attempts"],
            d["output_sha256"],
            d["step_sha256"],
            d["inventory_sha256"],
        )
        if "before" in d:
            befores[key] = d["before"]
    for d in _docs(data, "decisions"):
        hosts = unfold(d["hosts"]) if d["hosts"] else None
        state.decisions.append(
            Decision(
                d["kind"],
                d["step_id"],
                hosts,
                d["operator"],
                d["reason"],
                d["time"],
                d["expires"],
                d["hosts"],
            )
        )
    pending = _docs(data, "pending")
    state.pending = {tuple(k): p for k, p in zip(meta["pending_keys"], pending, strict=True)}
    for d in _docs(data, "host_keys"):
        d = dict(d)
        state.host_keys[d.pop("host")] = d
    blobs = [(str(sha), int(seq), str(what)) for sha, seq, what in meta["blobs"]]
    return state, blobs, meta
