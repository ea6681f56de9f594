"""Content-addressed command outputs beside the journal, in `blobs/`: each
holds the UTF-8 bytes of one output and is known by the SHA-256 of them, so it
is stored once, shared by equal outputs, and checked whenever it is read.

A run appends its blobs to one file, `blobs/pack`, a record after another:

    <sha256 hex> <length in bytes>\\n<the bytes>\\n

A batch's new blobs are one write and one fdatasync, made before the journal
line that references them, so a journal entry never points at a blob that a
crash could lose. A crash in between leaves at most an unreferenced record
(harmless) or an incomplete last one, which the next writer cuts off.

Why one file and not one file per blob (as runs before 2026-12 have them, and
as they are still read): a 1,000-node run stores ~7,000 outputs, and each file
was an inode allocated, an fsync and a rename. On the benchmarks' ext4 a new
file is 0.05-0.5 ms of kernel time, depending on the file system's state
(bench/fs_create.py); with the pack, a 1,000-node run's kernel time fell by
1.5-3.8 s (bench/README.md, "After session 11"). A real site's outputs, which
differ from host to host, would make several times as many files.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
from pathlib import Path

from .errors import StoreCorrupt
from .nofollow import DIR_MODE, open_fd, open_read
from .storage import datasync, fsync_dir

PACK = "pack"
_HEADER = re.compile(rb"([0-9a-f]{64}) (\d{1,12})\n")
_HEADER_MAX = 64 + 1 + 12 + 1


class BlobStore:
    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        self.pack = self.directory / PACK
        # sha256 -> (offset of its bytes in the pack, their length), for the records
        # read so far; _end is where the last complete record ends (the next one's start)
        self._index: dict[str, tuple[int, int]] = {}
        self._end = 0
        self._torn = False  # the pack ends with an incomplete record (a killed writer's)
        # Names known present: written durably here, or found (a run writes the same
        # outputs again and again; blobs are never removed, so a name stays true).
        self._present: set[str] = set()
        self._files: set[str] | None = None  # the blobs kept as files of their own, listed once
        self._lock = threading.Lock()  # the writer's thread and a reader's may index at once

    def path(self, sha256: str) -> Path:
        """Where a blob is, or would be: its own file (older runs) or the pack."""
        own = self.directory / sha256
        if sha256 in self._index or (not own.exists() and self.pack.exists()):
            return self.pack
        return own

    def names(self) -> set[str]:
        """Every blob name present (the pack's index and one directory listing)."""
        with self._lock:
            self._scan()
            return self._own_files() | set(self._index)

    def put_many(self, blobs: list[tuple[str, bytes]]) -> None:
        """Store (sha256, bytes) pairs durably: appended to the pack, one fdatasync."""
        present = self._present
        todo = {sha: data for sha, data in dict(blobs).items() if sha not in present}
        if todo:
            with self._lock:
                self._scan()
                new = {
                    sha: data for sha, data in todo.items() if sha not in self._index and not self._own(sha)
                }
                if new:
                    self._write(new)
        present.update(sha for sha, _ in blobs)  # on disk: found there, or written durably

    def _own(self, sha256: str) -> bool:
        """Whether the blob is a file of its own (written by a runbook before the pack;
        listed once: this writer adds none)."""
        if self._files is None:
            self._files = self._own_files()
        return sha256 in self._files

    def _own_files(self) -> set[str]:
        try:
            return {n for n in os.listdir(self.directory) if len(n) == 64}
        except FileNotFoundError:
            return set()

    def _write(self, new: dict[str, bytes]) -> None:
        self.directory.mkdir(mode=DIR_MODE, exist_ok=True)
        created = not self.pack.exists()
        fd = open_fd(self.pack, os.O_WRONLY | os.O_CREAT)
        try:
            if self._torn:  # a killed writer's incomplete record: never referenced
                os.ftruncate(fd, self._end)
                self._torn = False
            parts: list[bytes] = []
            at, placed = self._end, {}
            for sha, data in new.items():
                head = b"%s %d\n" % (sha.encode("ascii"), len(data))
                placed[sha] = (at + len(head), len(data))
                parts += (head, data, b"\n")
                at += len(head) + len(data) + 1
            view = memoryview(b"".join(parts))
            offset = self._end
            try:
                while view:
                    n = os.pwrite(fd, view, offset)
                    view, offset = view[n:], offset + n
                datasync(fd)
            except OSError:
                # nothing of this batch counts as written: the next batch writes it again
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, self._end)
                raise
        finally:
            os.close(fd)
        if created:
            fsync_dir(self.directory)
        self._index.update(placed)
        self._end = at

    def _scan(self) -> None:
        """Index the pack's records past the ones already read (another process may
        have appended since); stop at an incomplete one. Two small reads a record,
        its header and the newline after its bytes: the bytes are read only by get()."""
        try:
            f = open_read(self.pack)
        except FileNotFoundError:
            return
        with f:
            fd = f.fileno()
            size = os.fstat(fd).st_size
            at = self._end
            while at < size:
                head = os.pread(fd, _HEADER_MAX, at)
                m = _HEADER.match(head)
                if m is None:
                    break
                start = at + m.end()
                length = int(m.group(2))
                if start + length + 1 > size or os.pread(fd, 1, start + length) != b"\n":
                    break
                self._index.setdefault(m.group(1).decode("ascii"), (start, length))
                at = start + length + 1
            self._end = at
            self._torn = at < size

    def _indexed(self, sha256: str) -> dict[str, tuple[int, int]]:
        """The index, read further when `sha256` is not in it yet."""
        if sha256 not in self._index:
            with self._lock:
                self._scan()
        return self._index

    def get(self, sha256: str, used_by: str = "") -> str:
        """The text of a blob, checked against its name."""
        who = f" ({used_by})" if used_by else ""
        place = self._indexed(sha256).get(sha256)
        path = self.pack if place is not None else self.directory / sha256
        try:
            with open_read(path) as f:
                if place is not None:
                    data = os.pread(f.fileno(), place[1], place[0])
                else:
                    data = f.read()
        except FileNotFoundError:
            raise StoreCorrupt(
                self.path(sha256),
                f"output blob {sha256} missing{who}: the run's blobs/ directory was damaged or partly copied",
            ) from None
        if hashlib.sha256(data).hexdigest() != sha256:
            raise StoreCorrupt(
                path, f"output blob {sha256} does not match its SHA-256{who}: it was changed or damaged"
            )
        return data.decode("utf-8", "replace")

    def remove_temp(self) -> None:
        """Drop what a killed writer left behind, never referenced: temp files of the
        one-file-per-blob layout (the pack's incomplete record is cut at the next write)."""
        if self.directory.is_dir():
            for p in self.directory.glob(".tmp-*"):
                p.unlink(missing_ok=True)
