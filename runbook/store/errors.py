"""Errors of the store. All are RunbookErrors, so the CLI prints the message
and exits with the code (2; a held lock is runbook.errors.LockHeld, 4)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import RunbookError


class StoreError(RunbookError):
    """The store cannot do what was asked (no such run, read-only, disk full...)."""


class NoRun(StoreError):
    """No run to open in the state directory."""


class StoreCorrupt(StoreError):
    """A state file is damaged or not ours. Printed as `FILE:LINE: what is wrong`,
    like every input problem; never repaired silently."""

    def __init__(self, path: str | Path, message: str, line: int | None = None):
        self.path = str(path)
        self.line = line
        where = f"{self.path}:{line}" if line else self.path
        super().__init__(f"{where}: {message}")


@contextmanager
def os_errors(where: str | Path) -> Iterator[None]:
    """An OSError (permission denied, disk full, read-only file system...) becomes
    a StoreError naming the file, not a traceback."""
    try:
        yield
    except OSError as exc:
        raise StoreError(f"{exc.filename or where}: {exc.strerror or exc}") from None
