"""A fingerprint of some of runbook's own source files, for the caches whose entries that
code computed (workspace/lint_cache.py, workspace/load_cache.py,
store/inventory_records.py): an entry made by other code must never be found.

It hashes the version and each file's path, size, modification time and inode, which is
how Python itself decides that a module's cached bytecode is stale: an edit, a
reinstall or a checkout changes them. Reading and hashing the files' bytes instead cost
~6 ms of every `runbook run`'s start for the three caches (bench/cold_phases.py).
A leaf module: only the standard library."""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

from . import __version__

PACKAGE = Path(__file__).resolve().parent


@functools.cache
def fingerprint(parts: tuple[str, ...]) -> str | None:
    """The fingerprint of `parts` (files and directories of the package, relative to it;
    a directory: every .py under it; "*.py": the .py files of the package's top level);
    None when one cannot be read (no cache then)."""
    digest = hashlib.sha256(__version__.encode())
    try:
        for part in parts:
            for path in _sources(PACKAGE / part):
                st = os.stat(path)
                rel = os.path.relpath(path, PACKAGE)
                digest.update(f"\0{rel}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}".encode())
    except OSError:
        return None
    return digest.hexdigest()


def _sources(path: Path) -> list[str]:
    if path.name == "*.py":
        return sorted(str(p) for p in path.parent.glob("*.py"))
    if not path.is_dir():
        os.stat(path)  # a missing file is an OSError, as a missing directory is
        return [str(path)]
    found = []
    for root, dirs, files in os.walk(path, onerror=_raise):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        found += [os.path.join(root, f) for f in sorted(files) if f.endswith(".py")]
    return found


def _raise(error: OSError) -> None:
    raise error
