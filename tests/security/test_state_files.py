"""Item 5 of issue 16: no state file is opened through a symbolic link; state
files and directories are owner-only."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from runbook.errors import InputError
from runbook.run.events import HostFinished, HostStarted, StepStarted
from runbook.store import Store
from runbook.store.errors import StoreError
from runbook.store.lock import StateLock, holder
from runbook.transport import HostKeyPolicy

from .helpers import cli, project


def _store(state: Path, run_id: str = "run-1") -> Store:
    return Store.create(
        state,
        run_id,
        site="s",
        operator="alice",
        tool_version="0",
        inventory_sha256="a" * 64,
        runbook_sha256="b" * 64,
    )


def test_lock_through_a_symlink_is_refused_and_the_target_untouched(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (state / "lock").symlink_to(victim)
    with pytest.raises(StoreError, match="is a symbolic link"):
        StateLock(state).acquire()
    with pytest.raises(StoreError, match="is a symbolic link"):
        _store(state)
    assert victim.read_text() == "precious\n"
    with pytest.raises(StoreError, match="is a symbolic link"):
        holder(state)


def test_dangling_lock_link_does_not_create_its_target(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "lock").symlink_to(tmp_path / "created-by-attacker")
    with pytest.raises(StoreError, match="is a symbolic link"):
        StateLock(state).acquire()
    assert not (tmp_path / "created-by-attacker").exists()


def test_cli_says_so_in_one_line(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "lock").symlink_to(tmp_path / "elsewhere")
    p = cli("waive", "s", "--reason", "r", "--state", str(state), *project(tmp_path))
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert f"{state / 'lock'}: is a symbolic link" in p.stderr
    assert not (tmp_path / "elsewhere").exists()


def test_journal_and_blobs_through_symlinks_are_refused(tmp_path: Path) -> None:
    state = tmp_path / "state"
    store = _store(state)
    store.close()
    journal = state / "run-1" / "journal.jsonl"
    real = tmp_path / "journal-copy"
    real.write_bytes(journal.read_bytes())
    journal.unlink()
    journal.symlink_to(real)
    with pytest.raises(StoreError, match="is a symbolic link"):
        Store.open(state, "run-1")
    with pytest.raises(StoreError, match="is a symbolic link"):
        Store.open(state, "run-1", read_only=True)
    assert real.read_bytes().count(b"\n") == 2  # nothing appended to the link's target


def test_a_blob_pack_through_a_symlink_is_neither_read_nor_written(tmp_path: Path) -> None:
    import hashlib

    from runbook.store.blobs import BlobStore

    data = b"o" * 5000
    sha = hashlib.sha256(data).hexdigest()
    BlobStore(tmp_path / "blobs").put_many([(sha, data)])
    pack, real = tmp_path / "blobs" / "pack", tmp_path / "pack-copy"
    real.write_bytes(pack.read_bytes())
    pack.unlink()
    pack.symlink_to(real)
    with pytest.raises(StoreError, match="is a symbolic link"):
        BlobStore(tmp_path / "blobs").get(sha)
    with pytest.raises(StoreError, match="is a symbolic link"):
        BlobStore(tmp_path / "blobs").put_many([(hashlib.sha256(b"new" * 999).hexdigest(), b"new" * 999)])
    assert real.read_bytes().count(b"\n") == 2  # one record, nothing appended to the link's target


def test_pin_file_through_a_symlink_is_refused(tmp_path: Path) -> None:
    (tmp_path / "known_hosts").symlink_to(tmp_path / "x")
    with pytest.raises(InputError, match="is a symbolic link"):
        HostKeyPolicy([], trust_new=True, pin_file=tmp_path / "known_hosts")


def test_state_files_are_owner_only(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        state = tmp_path / "state"
        store = _store(state)
        big = "x" * 100_000  # stored as a blob
        store.append_many(
            [StepStarted("s", "verify", ("h",), "1" * 64), HostStarted("s", "verify", "h", "cmd")]
        )
        store.append_many([HostFinished("s", "verify", "h", "pass", "", "cmd", 0, big, "", 1.0, 2.0)])
        store.close()
    finally:
        os.umask(old)
    paths = [state, *state.rglob("*")]
    assert any(p.parent.name == "blobs" for p in paths)
    for p in paths:
        mode = stat.S_IMODE(p.lstat().st_mode)
        assert mode & 0o077 == 0, f"{p}: {oct(mode)}"


def test_a_run_through_the_cli_leaves_only_owner_only_files(tmp_path: Path) -> None:
    """Everything the CLI writes in the state directory, the run's record of its
    definitions included."""
    state = tmp_path / "state"
    p = cli("waive", "s", "--reason", "r", "--state", str(state), *project(tmp_path))
    assert p.returncode == 0, p.stderr
    paths = [state, *state.rglob("*")]
    assert len(paths) > 3
    for path in paths:
        mode = stat.S_IMODE(path.lstat().st_mode)
        assert mode & 0o077 == 0, f"{path}: {oct(mode)}"
