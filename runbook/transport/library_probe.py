"""asyncssh's search for optional C libraries when it is imported, its misses
remembered.

Importing asyncssh asks `ctypes.util.find_library` for liboqs (crypto/pq.py:
"oqs", then "liboqs", for post-quantum key exchange) and for nettle
(crypto/umac.py: the umac MACs). On Linux a name that is not in the dynamic
linker's cache is then looked for with gcc and with ld, each a subprocess:
~35 ms of every start on a machine without liboqs, the usual case
(bench/README.md, "After session 13"). raw asyncssh pays it too.

A miss is remembered in the state directory (STATE/library-probe/misses.json,
read and written as the other caches are: runbook/owned_files.py), keyed by the
dynamic linker's cache (/etc/ld.so.cache: size, modification time, inode;
installing a library with the package manager runs ldconfig, which rewrites it),
the variables that steer the search, and the Python that searches. A later
start answers those names at once. A library found is never remembered: finding
it costs one ldconfig lookup, and a remembered hit could name a library that is
gone. A miss remembered wrongly (a library copied in by hand, no ldconfig run)
only leaves out what asyncssh would have offered with it, as on a machine
without it: neither the ciphers, the host keys nor the key exchanges runbook
asks for (transport/connect.py) depend on it.

Standard library only: it runs before asyncssh is imported.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from ..owned_files import read_keyed, write_json

DIR_NAME = "library-probe"
FILE_NAME = "misses.json"
LINKER_CACHE = "/etc/ld.so.cache"
# what ctypes.util's search on Linux reads besides the linker's cache (gcc and ld
# are found on PATH; LIBRARY_PATH and GCC_EXEC_PREFIX steer gcc, LD_LIBRARY_PATH ld)
_ENVIRONMENT = ("PATH", "LIBRARY_PATH", "LD_LIBRARY_PATH", "GCC_EXEC_PREFIX")


def probe_key(linker_cache: str = LINKER_CACHE, environ=os.environ) -> str | None:
    """What the answers depend on; None where there is no linker cache to key on
    (not Linux, or a system without one): there nothing is remembered."""
    try:
        st = os.stat(linker_cache)
    except OSError:
        return None
    parts = [
        sys.platform,
        sys.version,
        sys.executable,
        st.st_size,
        st.st_mtime_ns,
        st.st_ino,
        [environ.get(v, "") for v in _ENVIRONMENT],
    ]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def recall(state: str | Path, key: str | None) -> frozenset[str]:
    """The names remembered missing for `key`; none when nothing trusted is kept."""
    record = read_keyed(Path(state) / DIR_NAME / FILE_NAME, key)
    if record is None:
        return frozenset()
    missing = record.get("missing")
    if not isinstance(missing, list) or not all(isinstance(n, str) for n in missing):
        return frozenset()
    return frozenset(missing)


def remember(state: str | Path, key: str | None, missing: set[str]) -> None:
    """Keep `missing` for `key` in an existing state directory (a cache: what is
    not written is simply searched for again)."""
    if key is None or not Path(state).is_dir():
        return
    write_json(Path(state) / DIR_NAME / FILE_NAME, {"key": key, "missing": sorted(missing)})


def import_asyncssh(state: str | Path | None) -> None:
    """Import asyncssh, answering the library names remembered missing for this
    machine at once and remembering the new misses. Nothing to do when asyncssh
    is imported already."""
    if "asyncssh" in sys.modules:
        return
    key = probe_key() if state is not None else None
    if key is None:
        import asyncssh

        return
    import ctypes.util

    known = recall(state, key)
    seen: set[str] = set()
    real = ctypes.util.find_library

    def find_library(name: str):
        if name in known:
            seen.add(name)
            return None
        found = real(name)
        if found is None:
            seen.add(name)
        return found

    ctypes.util.find_library = find_library
    try:
        import asyncssh  # noqa: F401
    finally:
        ctypes.util.find_library = real
    if seen != known:
        remember(state, key, seen)
