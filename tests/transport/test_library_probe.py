"""asyncssh's search for optional C libraries at import, its misses remembered in
the state directory (runbook/transport/library_probe.py). Each import runs in a
fresh interpreter: this one has asyncssh imported already."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from runbook.transport import library_probe
from runbook.transport.library_probe import probe_key, recall, remember

REPO = Path(__file__).resolve().parents[2]

# Counts the real searches (the stand-in import_asyncssh keeps as "the real one"),
# imports asyncssh through import_asyncssh, and reports what asyncssh made of it.
CHILD = """
import ctypes.util, json, sys
asked = []
real = ctypes.util.find_library
def counted(name):
    asked.append(name)
    return real(name)
ctypes.util.find_library = counted
from runbook.transport.library_probe import import_asyncssh
import_asyncssh(sys.argv[1])
import asyncssh.crypto.pq as pq, asyncssh.crypto.umac as umac
print(json.dumps({
    "searched": asked,
    "restored": ctypes.util.find_library is counted,
    "pq": [pq.mlkem_available, pq.sntrup_available],
    "umac": bool(getattr(umac, "_nettle", None)),
}))
"""


def child(state: Path, **env) -> dict:
    p = subprocess.run(
        [sys.executable, "-c", CHILD, str(state)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO), **env},
        check=True,
    )
    return json.loads(p.stdout)


@pytest.mark.skipif(probe_key() is None, reason="no dynamic linker cache to key on here")
def test_a_miss_is_searched_for_once_and_asyncssh_makes_the_same_of_it(tmp_path):
    first = child(tmp_path)
    assert first["restored"]  # find_library is ctypes' own again after the import
    assert set(first["searched"]) >= {"oqs", "nettle"}  # what asyncssh asks for
    record = json.loads((tmp_path / "library-probe" / "misses.json").read_text())
    # only what the real search did not find is kept
    import ctypes.util

    assert all(ctypes.util.find_library(n) is None for n in record["missing"])
    assert set(record["missing"]) <= set(first["searched"])

    second = child(tmp_path)
    assert second["searched"] == [n for n in first["searched"] if n not in record["missing"]]
    assert (second["pq"], second["umac"]) == (first["pq"], first["umac"])

    # another search path: the answers may differ, so everything is searched again
    third = child(tmp_path, LIBRARY_PATH=str(tmp_path))
    assert third["searched"] == first["searched"]


def test_the_key_follows_the_linker_cache_and_the_search_variables(tmp_path):
    cache = tmp_path / "ld.so.cache"
    assert probe_key(str(cache)) is None  # no linker cache: nothing is remembered
    cache.write_bytes(b"x")
    key = probe_key(str(cache), {"PATH": "/usr/bin"})
    assert key == probe_key(str(cache), {"PATH": "/usr/bin"})
    assert key != probe_key(str(cache), {"PATH": "/usr/bin", "LD_LIBRARY_PATH": "/opt/lib"})
    cache.write_bytes(b"xy")  # ldconfig rewrote it: a library came or went
    assert key != probe_key(str(cache), {"PATH": "/usr/bin"})


def test_only_a_trusted_record_of_the_same_key_is_recalled(tmp_path):
    assert recall(tmp_path, "k") == frozenset()
    remember(tmp_path, "k", {"oqs", "liboqs"})
    assert recall(tmp_path, "k") == {"oqs", "liboqs"}
    assert recall(tmp_path, "other") == frozenset()
    assert recall(tmp_path, None) == frozenset()
    path = tmp_path / library_probe.DIR_NAME / library_probe.FILE_NAME
    path.chmod(0o666)  # writable by others: not trusted
    assert recall(tmp_path, "k") == frozenset()
    path.chmod(0o600)
    path.write_text(json.dumps({"key": "k", "missing": "oqs"}))  # not a list of names
    assert recall(tmp_path, "k") == frozenset()


def test_nothing_is_written_where_there_is_no_state_directory_yet(tmp_path):
    remember(tmp_path / "not-yet", "k", {"oqs"})
    assert not (tmp_path / "not-yet").exists()
