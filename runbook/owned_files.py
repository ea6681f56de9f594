"""Files and directories a cache may trust: this user's own, writable by nobody
else, never reached through a symbolic link. The caches beside the runs (the
load cache and lint cache of runbook/workspace, the definitions cache of
runbook/store/definitions.py) read back only what passes these checks.
read_json, read_keyed and write_json are the JSON files of the lint cache, the
dial plans and the library probe (runbook/workspace/lint_cache.py, dial_plan.py,
runbook/transport/library_probe.py). A leaf module, standard library
only: imported before anything heavy on the way to the first connection."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path


def ours(st: os.stat_result, *, directory: bool) -> bool:
    """Written by this user and writable by nobody else (a directory: 0700)."""
    if st.st_uid != os.getuid():
        return False
    if directory:
        return stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) & 0o077 == 0
    return stat.S_ISREG(st.st_mode) and st.st_mode & 0o022 == 0


def trusted_file(path: Path) -> bytes | None:
    """The bytes of a file this user wrote (not a link), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not ours(os.fstat(fd), directory=False):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    except OSError:
        return None
    finally:
        os.close(fd)


def trusted_dir(path: Path) -> bool:
    try:
        return ours(os.lstat(path), directory=True)
    except OSError:
        return False


def private_dir(path: Path) -> bool:
    """Make `path` (in an existing directory) a directory only this user may use;
    False when it is not one and cannot be."""
    if not path.parent.is_dir():
        return False
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        try:
            st = os.lstat(path)
            if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid():
                os.chmod(path, 0o700)
        except OSError:
            return False
    except OSError:
        return False
    return trusted_dir(path)


def read_json(path: Path):
    """The JSON in `path` when its directory and the file pass the checks above, else None."""
    if not trusted_dir(path.parent):
        return None
    blob = trusted_file(path)
    try:
        return json.loads(blob) if blob is not None else None
    except ValueError:
        return None


def read_keyed(path: Path, key: str | None) -> dict | None:
    """The record in `path` (read_json) when it is an object whose "key" is `key`:
    what the caches keyed by what they depend on read back; else None."""
    if key is None:
        return None
    record = read_json(path)
    return record if isinstance(record, dict) and record.get("key") == key else None


def write_json(path: Path, record) -> None:
    """Write `record` to `path`, in a directory made private_dir, whole or not at all
    (a temporary file renamed). A cache: what is not written is simply done again."""
    try:
        if not private_dir(path.parent):
            return
        tmp = path.parent / f".tmp-{os.getpid()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(record, sort_keys=True))
        os.replace(tmp, path)
    except OSError:
        pass
