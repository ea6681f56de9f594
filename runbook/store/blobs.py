"""Content-addressed output files beside the journal: `blobs/<sha256 hex>`,
holding the UTF-8 bytes of one command output. The name is the SHA-256 of the
content, so a blob is written once, shared by equal outputs, and checked
whenever it is read.

Blobs are made durable (file fsync, rename, directory fsync) before the
journal line that references them is written, so a journal entry never
points at a blob that a crash could lose. A crash in between leaves at most
an unreferenced blob (harmless) or a `.tmp-*` file (removed on open).

A batch's new blobs are written by a few threads at once: each file's fsync
waits for the disk, and the file system commits fsyncs that arrive together
as one (a 1,000-node run writes ~7,000 blobs; one after the other they cost
the batches they belong to ~0.4 ms each here). Each file is still fsynced
before its rename, and the directory after all of them.
"""

from __future__ import annotations

import hashlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

from .errors import StoreCorrupt
from .nofollow import DIR_MODE, open_fd, read_bytes
from .storage import fsync_dir

# Writers at once for a batch's new blobs: enough for the file system to commit their
# fsyncs together, few enough not to compete with the run for the CPU. A batch with
# fewer new blobs writes them itself: handing a few to threads costs more CPU than
# their fsyncs' wait. Paired with one writer (bench/pipeline.py, time scale 0, a
# loaded machine): 384 nodes, wall 21.1 -> 17.4 s and client CPU -3% (3 pairs);
# 48 nodes, wall unchanged and client CPU +4% (6 pairs).
WRITERS = 4
PARALLEL_FROM = 16


class BlobStore:
    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        # Names this object wrote durably, or found on disk: a run writes the
        # same outputs again and again (a fleet's equal outputs, a step run
        # again), and each was a stat and two Paths per batch. Blobs are never
        # removed, so a name once here stays true.
        self._present: set[str] = set()
        # the writers, made at the first batch that needs them and ended by close():
        # no thread outlives the store (`runbook run` leaves without the interpreter's
        # teardown only when its own thread is the last, cli/main.py _leave_now)
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def path(self, sha256: str) -> Path:
        return self.directory / sha256

    def exists(self, sha256: str) -> bool:
        return self.path(sha256).is_file()

    def names(self) -> set[str]:
        """Every blob name present (one directory listing, not one stat per blob)."""
        try:
            return set(os.listdir(self.directory))
        except FileNotFoundError:
            return set()

    def put_many(self, blobs: list[tuple[str, bytes]]) -> None:
        """Store (sha256, bytes) pairs durably: one directory fsync for the lot."""
        present = self._present
        new = [
            (sha, data) for sha, data in dict(blobs).items() if sha not in present and not self.exists(sha)
        ]
        if new:
            self._write(new)
        present.update(sha for sha, _ in blobs)  # on disk: found there, or written durably

    def _write(self, new: list[tuple[str, bytes]]) -> None:
        self.directory.mkdir(mode=DIR_MODE, exist_ok=True)
        if len(new) < PARALLEL_FROM:
            for sha, data in new:
                self._write_one(sha, data)
        else:
            # all of them ended before the directory's fsync, or before a failure is
            # raised (the first in order, as the loop raises it): no write goes on
            # behind an error the store reports
            futures = [self._writers().submit(self._write_one, sha, data) for sha, data in new]
            wait(futures)
            for f in futures:
                f.result()
        fsync_dir(self.directory)

    def _writers(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(WRITERS, thread_name_prefix="runbook-blobs")
            return self._pool

    def close(self) -> None:
        """End the writers' threads (a batch in flight finishes first)."""
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    def _write_one(self, sha: str, data: bytes) -> None:
        tmp = self.directory / f".tmp-{sha}-{os.getpid()}"
        fd = open_fd(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, self.path(sha))

    def get(self, sha256: str, used_by: str = "") -> str:
        """The text of a blob, checked against its name."""
        path = self.path(sha256)
        who = f" ({used_by})" if used_by else ""
        try:
            data = read_bytes(path)
        except FileNotFoundError:
            raise StoreCorrupt(
                path, f"output blob missing{who}: the run's blobs/ directory was damaged or partly copied"
            ) from None
        if hashlib.sha256(data).hexdigest() != sha256:
            raise StoreCorrupt(
                path, f"output blob does not match its SHA-256 name{who}: it was changed or damaged"
            )
        return data.decode("utf-8", "replace")

    def remove_temp(self) -> None:
        """Drop temp files a killed writer left behind (never referenced)."""
        if self.directory.is_dir():
            for p in self.directory.glob(".tmp-*"):
                p.unlink(missing_ok=True)
