"""One owner per state directory: `<state>/lock`.

The lock is an flock() on that file, held for as long as the owning process
has a run open for writing; the file's content (JSON: host, pid, since,
command, run) says who holds it, so a second process is told exactly whom it
is waiting for. The kernel releases an flock when its process dies, however it
dies, so a lock whose file still names a holder but that flock() grants was
left by a dead process: it is taken over, and `taken_over` says from whom.
The file is never deleted (deleting a lock file races with another process
that has just opened it); an empty file means free.

flock works across processes on one machine and, on Linux, on NFSv4 shares.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import socket
import sys
import time
from pathlib import Path
from typing import Any

from ..errors import LockHeld
from .nofollow import open_fd

LOCK_NAME = "lock"


def _when(t: Any) -> str:
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(t)))
    except (TypeError, ValueError, OverflowError):
        return "an unknown time"


def describe(holder: dict[str, Any]) -> str:
    """`pid 4242 on host lab1 since 2026-11-29 20:15:03 (runbook run --all)`."""
    text = (
        f"pid {holder.get('pid', '?')} on host {holder.get('host', '?')} since {_when(holder.get('since'))}"
    )
    if holder.get("command"):
        text += f" ({holder['command']})"
    return text


def _read_body(fd: int) -> dict[str, Any] | None:
    os.lseek(fd, 0, os.SEEK_SET)
    raw = b""
    while chunk := os.read(fd, 65536):
        raw += chunk
    if not raw.strip():
        return None
    try:
        body = json.loads(raw)
    except ValueError:
        return {"pid": "?", "host": "?", "note": "unreadable lock file"}
    return body if isinstance(body, dict) else None


class StateLock:
    def __init__(self, state_dir: str | Path, command: str | None = None):
        self.path = Path(state_dir) / LOCK_NAME
        if command is None:
            command = shlex.join([Path(sys.argv[0]).name] + sys.argv[1:]) if sys.argv and sys.argv[0] else ""
        self.command = command
        self.taken_over: dict[str, Any] | None = None  # the dead holder we replaced
        self.body: dict[str, Any] = {}
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, wait_for_body: float = 0.5) -> None:
        """Take the lock or raise LockHeld naming the holder."""
        fd = open_fd(self.path, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_body(fd)
            deadline = time.monotonic() + wait_for_body
            while holder is None and time.monotonic() < deadline:
                time.sleep(0.02)  # the holder has flock()ed but not yet written its name
                holder = _read_body(fd)
            os.close(fd)
            who = describe(holder) if holder else "another process (it has not written its name yet)"
            raise LockHeld(
                f"{self.path.parent}/ is in use by another runbook: {who}. Wait for it to "
                f"finish or stop it; a lock left by a process that died is taken over "
                f"automatically."
            ) from None
        except BaseException:
            os.close(fd)
            raise
        previous = _read_body(fd)
        if previous:  # flock granted, yet a holder is named: it died without releasing
            self.taken_over = previous
        self._fd = fd
        self.body = {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "since": time.time(),
            "command": self.command,
        }
        self._write_body()

    def note_run(self, run_id: str) -> None:
        """Say which run the holder has open (shown by `runbook runs`)."""
        self.body["run"] = run_id
        self._write_body()

    def _write_body(self) -> None:
        assert self._fd is not None
        data = json.dumps(self.body, sort_keys=True).encode() + b"\n"
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)
        os.fsync(self._fd)

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)  # empty = free (a leftover name would read as a crash)
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def holder(state_dir: str | Path) -> dict[str, Any] | None:
    """Who holds the state directory's lock now (None when nobody does).
    Probes with a non-blocking flock, released at once."""
    path = Path(state_dir) / LOCK_NAME
    try:
        fd = open_fd(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_body(fd) or {"pid": "?", "host": "?"}
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
