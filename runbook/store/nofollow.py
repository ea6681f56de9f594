"""Opening state files: never through a symbolic link, owner-only when created.

A link planted in the state directory (`state/lock -> ~/.bashrc`) would make
the tool truncate or write the file it points at, and a dangling one would
create its target; O_NOFOLLOW refuses both. Outputs may be sensitive (serial
numbers, addresses, configuration), so files are created 0600 and
directories 0700 (docs/security.md)."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import BinaryIO

from .errors import StoreError

FILE_MODE = 0o600
DIR_MODE = 0o700
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def open_fd(path: str | Path, flags: int, mode: int = FILE_MODE) -> int:
    """os.open without following a symbolic link at `path` (StoreError if it is one)."""
    try:
        return os.open(path, flags | _NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise StoreError(
                f"{path}: is a symbolic link; a state file is never opened "
                "through one (replace the link with the real file)"
            ) from None
        raise


def open_read(path: str | Path) -> BinaryIO:
    """open(path, "rb") without following a symbolic link."""
    return os.fdopen(open_fd(path, os.O_RDONLY), "rb")


def read_bytes(path: str | Path) -> bytes:
    with open_read(path) as f:
        return f.read()
