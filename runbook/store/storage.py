"""Durable append-only storage for one run's journal, and a tinydb view of it.

File format (`journal.jsonl`, UTF-8, one JSON document per line):

    line 1    {"runbook_store": 2, "run_id": "...", "created": 1764447300.5, ...}
    line 2..  {"sum":"<sha256 hex of BATCH>","batch":BATCH}

BATCH is the JSON array of the journal entries committed together (one
`Store.append` or `Store.append_many`). It is written with one write() and
made durable with one fdatasync() before the call returns: nothing is shown
as done before it is on disk, and the cost of a commit does not depend on how
big the file already is (the file is never rewritten).

Why a whole batch per line: a kill (or power cut) mid-write can only leave an
incomplete *last* line, without its newline. That batch was never
acknowledged, so it is dropped when the run is read, and cut off the file
when the run is next opened for writing. Any other damage (a line changed,
garbage in the middle, a file that is not ours) is an error naming the file
and the line: `sum` lets every line be checked cheaply, and nothing is ever
repaired silently.

A new journal is written whole to a temporary file, fsynced, renamed into
place and its directory fsynced, so a journal file either exists complete
(header and first batch) or not at all.

Why not tinydb's own storages: its JSONStorage rewrites the whole file in
place without fsync on every write, and tinydb's Table.insert rebuilds the
whole table in memory on every call, so the per-event cost grows with the
run (bench/store_bench.py: one JSONStorage insert takes ~10 ms at 1k
documents and ~100 ms at 10k; even MemoryStorage takes 5 ms at 10k).
tinydb remains available as a read-only query view (`JournalStorage`).
"""

from __future__ import annotations

import hashlib
import json
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tinydb.storages import Storage

from .errors import StoreCorrupt, StoreError
from .nofollow import open_fd, open_read

HEADER_KEY = "runbook_store"
FORMAT = 2  # 2: the first entry's prev is the hash of the header (canonical.header_genesis)
READABLE = (1, 2)
_PREFIX = b'{"sum":"'
_MID = b'","batch":'
_SUFFIX = b"}\n"
_PAYLOAD_AT = len(_PREFIX) + 64 + len(_MID)


def fsync_dir(path: str | Path) -> None:
    """Make a rename or a new entry in `path` durable."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def datasync(fd: int) -> None:
    # fdatasync flushes the data and the file size (all an append needs).
    (getattr(os, "fdatasync", None) or os.fsync)(fd)


def _json(entries: list[Any]) -> bytes:
    return json.dumps(entries, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


try:  # the same compact UTF-8 JSON, ~8x faster (a batch line per batch of results)
    import orjson

    def _payload(entries: list[Any]) -> bytes:
        # Entries come from journal.make_entry: values with a canonical JSON form
        # (canonical.py refuses NaN and infinities), so both encoders write the
        # same values. orjson refuses integers beyond 64 bits: those batches go
        # through the standard library.
        try:
            return orjson.dumps(entries)
        except TypeError:
            return _json(entries)
except ImportError:  # pragma: no cover - a platform without orjson's wheel
    _payload = _json


def encode_batch(entries: list[Any]) -> bytes:
    payload = _payload(entries)
    digest = hashlib.sha256(payload).hexdigest().encode()
    return _PREFIX + digest + _MID + payload + _SUFFIX


def decode_batch(line: bytes) -> list[Any]:
    """One batch line -> its entries; ValueError saying what is wrong."""
    if not (
        line.startswith(_PREFIX)
        and line.endswith(_SUFFIX)
        and line[_PAYLOAD_AT - len(_MID) : _PAYLOAD_AT] == _MID
    ):
        raise ValueError('not a journal line (expected {"sum":...,"batch":[...]})')
    payload = line[_PAYLOAD_AT : -len(_SUFFIX)]
    if hashlib.sha256(payload).hexdigest().encode() != line[len(_PREFIX) : len(_PREFIX) + 64]:
        raise ValueError("the line does not match its checksum: it was changed or damaged")
    try:
        batch = json.loads(payload)
    except ValueError as exc:  # the checksum matched, so this was written so (not by us)
        raise ValueError(f"bad JSON in the batch ({exc})") from None
    if not isinstance(batch, list) or not batch:
        raise ValueError("the batch is not a non-empty list of entries")
    return batch


def create_journal(path: Path, header: dict[str, Any], first_batch: bytes) -> None:
    """Write header + first batch to a temp file, fsync, rename, fsync the directory."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    data = json.dumps(header, sort_keys=True, separators=(",", ":")).encode() + b"\n" + first_batch
    fd = open_fd(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(tmp, path)
    fsync_dir(path.parent)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def parse_header(path: Path, first: bytes) -> dict[str, Any]:
    """The header (first line) of a journal, or StoreCorrupt saying why it is not one."""
    if not first:
        raise StoreCorrupt(
            path,
            "the file is empty: not a runbook journal (a journal starts with a runbook_store header line)",
        )
    if not first.endswith(b"\n"):
        raise StoreCorrupt(path, "the header line is incomplete: not a runbook journal", 1)
    try:
        header = json.loads(first)
    except ValueError:
        raise StoreCorrupt(path, "not a runbook journal: the first line is not JSON", 1) from None
    if not isinstance(header, dict) or HEADER_KEY not in header:
        hint = (
            " (it looks like a tinydb JSON file from another tool)"
            if isinstance(header, dict) and "_default" in header
            else ""
        )
        raise StoreCorrupt(
            path, f"not a runbook journal: the first line has no {HEADER_KEY!r} header{hint}", 1
        )
    if header[HEADER_KEY] not in READABLE:
        raise StoreCorrupt(
            path,
            f"journal format {header[HEADER_KEY]!r}; this runbook reads "
            f"formats {', '.join(map(str, READABLE))} (written by another version?)",
            1,
        )
    return header


class JournalReader:
    """Reads a journal file line by line, checking every line.

    After `batches()` is exhausted, `good_end` is the byte offset just past the
    last complete line and `torn_bytes` the size of an incomplete last line
    that was skipped (0 if none)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.header: dict[str, Any] = {}
        self.good_end = 0
        self.torn_bytes = 0
        self.torn_line = 0
        self.last_line_size = 0  # of the last complete line read
        self.crc = 0  # CRC-32 of the bytes up to good_end (a cheap check of a journal's prefix)

    def _fail(self, message: str, line: int | None = None) -> StoreCorrupt:
        return StoreCorrupt(self.path, message, line)

    def batches(self, start: int = 0, line: int = 1, crc: int = 0) -> Iterator[tuple[int, list[Any]]]:
        """(line number, entries) for every complete line after the header; with
        `start`, only the lines from that byte offset on (`line`: the number of
        the line that ends there, `crc`: the CRC-32 of the bytes before it)."""
        try:
            f = open_read(self.path)
        except FileNotFoundError:
            raise self._fail("no such file (the run's journal is missing)") from None
        except OSError as exc:
            raise self._fail(f"cannot read: {exc.strerror}") from None
        with f:
            size = os.fstat(f.fileno()).st_size
            first = f.readline()
            self.header = parse_header(self.path, first)
            offset = len(first)
            self.crc = zlib.crc32(first)
            if start:
                f.seek(start)
                offset, self.crc = start, crc
            self.good_end = offset
            for number, line in enumerate(f, start=line + 1 if start else 2):  # noqa: B020 (start is read once)
                if offset >= size:  # appended by a live writer after we looked: not ours to read
                    break
                offset += len(line)
                if not line.endswith(b"\n"):
                    # only the last line can lack its newline: a write cut short
                    self.torn_bytes, self.torn_line = len(line), number
                    break
                try:
                    batch = decode_batch(line)
                except ValueError as exc:
                    raise self._fail(str(exc), number) from None
                self.good_end = offset
                self.last_line_size = len(line)
                self.crc = zlib.crc32(line, self.crc)
                yield number, batch


def prefix_crc(path: Path, end: int) -> int | None:
    """CRC-32 of the first `end` bytes of a file (None if it is shorter)."""
    crc, left = 0, end
    try:
        with open(path, "rb") as f:
            while left:
                chunk = f.read(min(left, 1 << 22))
                if not chunk:
                    return None
                crc, left = zlib.crc32(chunk, crc), left - len(chunk)
    except OSError:
        return None
    return crc


def read_line(path: Path, start: int, end: int) -> list[Any] | None:
    """The batch of the journal line at [start, end), or None when the file
    does not hold a whole checked line there."""
    try:
        with open(path, "rb") as f:
            f.seek(start)
            line = f.read(end - start)
    except OSError:
        return None
    if len(line) != end - start:
        return None
    try:
        return decode_batch(line)
    except ValueError:
        return None


class JournalWriter:
    """Appends batch lines durably. A failed write is cut back off the file so
    the journal never keeps half a line in its middle."""

    def __init__(self, path: str | Path, end: int):
        self.path = Path(path)
        self.end = end
        self.broken: str | None = None
        self._fd: int | None = open_fd(self.path, os.O_WRONLY | os.O_APPEND)

    def truncate(self, end: int) -> None:
        """Cut the file to `end` bytes (drop an incomplete last line) durably."""
        assert self._fd is not None
        os.ftruncate(self._fd, end)
        os.fsync(self._fd)
        self.end = end

    def append(self, line: bytes) -> None:
        if self._fd is None:
            raise StoreError(f"{self.path}: the store is closed")
        if self.broken:
            raise StoreError(f"{self.path}: refusing to write after an earlier failure: {self.broken}")
        try:
            _write_all(self._fd, line)
            datasync(self._fd)
        except OSError as exc:
            why = exc.strerror or str(exc)
            try:
                self.truncate(self.end)
            except OSError as exc2:
                self.broken = f"could not write ({why}) nor undo the partial write ({exc2.strerror})"
                raise StoreError(f"{self.path}: {self.broken}") from None
            raise StoreError(f"{self.path}: could not write ({why}); nothing was recorded") from None
        self.end += len(line)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class JournalStorage(Storage):
    """A read-only tinydb storage over a run's journal, for ad-hoc queries:

        db = TinyDB("state/RUN/journal.jsonl", storage=JournalStorage)
        db.table("journal").search(where("event")["host"] == "gpu07")

    Table "journal" holds one document per entry (doc_id = seq). Writing goes
    through Store.append only; `write` refuses."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._data: dict[str, dict[str, Any]] | None = None

    def read(self) -> dict[str, dict[str, Any]]:
        if self._data is None:
            docs = {str(e["seq"]): e for _, batch in JournalReader(self.path).batches() for e in batch}
            self._data = {"journal": docs}
        return self._data

    def write(self, data: dict[str, dict[str, Any]]) -> None:
        raise StoreError(f"{self.path}: the journal is read-only here; events are added with Store.append")
