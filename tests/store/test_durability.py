"""What makes an append durable, in order, at a flat cost."""

from __future__ import annotations

import errno
import os

import pytest

from runbook.run.events import HostFinished, HostKeyRecorded
from runbook.store import Store, StoreError

from .helpers import new_store


@pytest.fixture
def syscalls(monkeypatch):
    """Record write / fsync / fdatasync calls with the file each one touched."""
    calls: list[tuple[str, str, int]] = []
    real = {name: getattr(os, name) for name in ("write", "fsync", "fdatasync")}

    def spy(name):
        def call(fd, *args):
            out = real[name](fd, *args)
            path = os.readlink(f"/proc/self/fd/{fd}")
            calls.append((name, path, len(args[0]) if args else 0))
            return out

        return call

    for name in real:
        monkeypatch.setattr(os, name, spy(name))
    return calls


def test_append_syncs_blobs_then_the_journal_line_before_returning(tmp_path, syscalls):
    store = new_store(tmp_path)
    syscalls.clear()
    store.append(
        HostFinished("topo", "verify", "gpu01", "pass", "", "nvidia-smi topo -m", 0, "x" * 5000, "", 1.0, 2.0)
    )
    run = str(tmp_path / "run-1")

    def what(path):
        return "blob" if path.startswith(f"{run}/blobs/.tmp-") else path.replace(run, "RUN")

    assert [(name, what(path)) for name, path, _ in syscalls] == [
        ("write", "blob"),
        ("fsync", "blob"),  # the blob, in a temp file then renamed
        ("fsync", "RUN/blobs"),  # the rename made durable
        ("write", "RUN/journal.jsonl"),
        ("fdatasync", "RUN/journal.jsonl"),
    ]  # then the line
    store.close()


def test_append_many_is_one_write_and_one_sync(tmp_path, syscalls):
    with new_store(tmp_path) as store:
        syscalls.clear()
        store.append_many([HostKeyRecorded(f"gpu{i:02d}", f"SHA256:{i}", "known_hosts") for i in range(100)])
        assert [c[0] for c in syscalls] == ["write", "fdatasync"]


def test_cost_per_append_does_not_grow_with_the_run(tmp_path, syscalls):
    """Never rewrite the file: an append writes its own line and nothing else."""

    def one_append_bytes(store):
        syscalls.clear()
        store.append(HostKeyRecorded("gpu01", "SHA256:abc", "known_hosts"))
        return sum(n for name, _, n in syscalls if name == "write")

    with new_store(tmp_path) as store:
        early = one_append_bytes(store)
        for _ in range(20):
            store.append_many([HostKeyRecorded(f"gpu{i:03d}", f"SHA256:{i}", "pinned") for i in range(100)])
        late = one_append_bytes(store)
    assert early < 1000 and abs(late - early) <= 8  # only the seq digits differ


def test_failed_write_is_undone_and_reported(tmp_path, monkeypatch):
    store = new_store(tmp_path)
    journal = tmp_path / "run-1" / "journal.jsonl"
    size, head = journal.stat().st_size, store.head()
    real_write = os.write

    def disk_full(fd, data):
        if os.readlink(f"/proc/self/fd/{fd}") == str(journal):
            real_write(fd, bytes(data)[:50])  # half a line reaches the file...
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", disk_full)
    with pytest.raises(
        StoreError, match=r"could not write \(No space left on device\); nothing was recorded"
    ):
        store.append(HostKeyRecorded("gpu01", "SHA256:abc", "known_hosts"))
    monkeypatch.setattr(os, "write", real_write)
    assert journal.stat().st_size == size and store.head() == head  # ... and was cut back off
    store.append(HostKeyRecorded("gpu01", "SHA256:abc", "known_hosts"))
    store.close()
    with Store.open(tmp_path) as again:
        assert again.verify_chain() == again.head()
        assert again.run_info()["events"] == 2


def test_definitions_each_object_durable_before_its_rename_and_the_directories_after_all(
    tmp_path, monkeypatch
):
    """A new run writes its ~60 definition objects at once (store/definitions.py _put):
    still every object fsynced under its temporary name before the rename, and both
    directories fsynced after every rename, with no temporary file left."""
    from pathlib import Path

    from runbook.store.definitions import RunDefinitions
    from runbook.workspace.project import load_project

    repo = Path(__file__).resolve().parents[2]
    shipped = load_project(repo / "steps", repo / "inventory", check=False)
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        real_fsync(fd)
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))

    def replace(src, dst):
        real_replace(src, dst)
        events.append(("rename", str(src)))

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    record = RunDefinitions(tmp_path)
    assert record.record(shipped.runbook, shipped.inventory) is True
    objects = str(record.objects)
    renamed = [path for what, path in events if what == "rename" and path.startswith(objects)]
    assert len(renamed) == len({s.sha256 for s in shipped.runbook.steps}) + 2  # + runbook, inventory
    for tmp in renamed:
        synced_at = events.index(("fsync", tmp))
        assert synced_at < events.index(("rename", tmp))
    last_rename = max(i for i, e in enumerate(events) if e[0] == "rename" and e[1].startswith(objects))
    assert events[last_rename + 1 :][:2] == [("fsync", objects), ("fsync", str(record.directory))]
    assert not [p for p in record.objects.iterdir() if p.name.startswith(".tmp-")]
    assert record.current()[0].sha256 == shipped.runbook.sha256


def test_a_batch_of_blobs_is_fsynced_by_several_writers_each_before_its_rename_then_the_directory(
    tmp_path, monkeypatch
):
    """store/blobs.py: a batch's new blobs are written by a few threads at once (their
    fsyncs overlap); each is still durable before its rename, the directory after all."""
    import hashlib
    import threading

    from runbook.store.blobs import PARALLEL_FROM, WRITERS, BlobStore

    events: list[tuple[str, str]] = []
    threads: set[str] = set()
    real_fsync, real_rename = os.fsync, os.rename
    both = threading.Barrier(2, timeout=5)  # the first two fsyncs wait for each other:
    first_two = iter(range(2))  # only writers running side by side get past it
    lock = threading.Lock()

    def fsync(fd):
        path = os.readlink(f"/proc/self/fd/{fd}")
        if "/.tmp-" in path:
            threads.add(threading.current_thread().name)
            with lock:
                wait = next(first_two, None) is not None
            if wait:
                both.wait()
        real_fsync(fd)
        events.append(("fsync", "dir" if path.endswith("/blobs") else path.rsplit("/.tmp-", 1)[1][:64]))

    def rename(src, dst):
        real_rename(src, dst)
        events.append(("rename", str(dst).rsplit("/", 1)[1]))

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "rename", rename)
    datas = [f"output {i}\n".encode() * 50 for i in range(max(20, PARALLEL_FROM))]
    blobs = BlobStore(tmp_path / "blobs")
    blobs.put_many([(hashlib.sha256(d).hexdigest(), d) for d in datas])
    assert WRITERS > 1 and len(threads) > 1
    shas = [hashlib.sha256(d).hexdigest() for d in datas]
    for sha in shas:
        assert events.index(("fsync", sha)) < events.index(("rename", sha))
    assert events[-1] == ("fsync", "dir") and events.count(("fsync", "dir")) == 1
    assert all(blobs.get(sha).encode() == d for sha, d in zip(shas, datas))


def test_a_few_new_blobs_are_written_by_the_batch_itself(tmp_path, monkeypatch):
    import hashlib
    import threading

    from runbook.store.blobs import PARALLEL_FROM, BlobStore

    threads: set[str] = set()
    real_fsync = os.fsync

    def fsync(fd):
        threads.add(threading.current_thread().name)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    datas = [f"few {i}\n".encode() for i in range(PARALLEL_FROM - 1)]
    BlobStore(tmp_path / "blobs").put_many([(hashlib.sha256(d).hexdigest(), d) for d in datas])
    assert threads == {threading.current_thread().name}


def test_a_failed_blob_write_is_raised_only_once_every_writer_has_ended(tmp_path, monkeypatch):
    import hashlib
    import time

    from runbook.store.blobs import PARALLEL_FROM, BlobStore

    datas = [f"blob {i}\n".encode() for i in range(PARALLEL_FROM + 4)]
    pairs = [(hashlib.sha256(d).hexdigest(), d) for d in datas]
    failing = pairs[0][0]
    ended: list[str] = []
    real = BlobStore._write_one

    def write_one(self, sha, data):
        if sha == failing:
            raise OSError(28, "No space left on device")
        time.sleep(0.05)
        real(self, sha, data)
        ended.append(sha)

    monkeypatch.setattr(BlobStore, "_write_one", write_one)
    with pytest.raises(OSError, match="No space"):
        BlobStore(tmp_path / "blobs").put_many(pairs)
    assert len(ended) == len(pairs) - 1  # nothing still writing behind the error


def test_the_blob_writers_end_with_the_store(tmp_path):
    """`runbook run` skips the interpreter's teardown only when no other thread is
    left (cli/main.py _leave_now): the store's blob writers must not outlive it."""
    import threading

    from runbook.store.blobs import PARALLEL_FROM

    def writers():
        return [t for t in threading.enumerate() if t.name.startswith("runbook-blobs")]

    store = new_store(tmp_path)
    store.append_many(
        [
            HostFinished("s", "verify", f"gpu{i:02d}", "pass", "", "cmd", 0, f"out {i}\n" * 400, "", 1.0, 2.0)
            for i in range(PARALLEL_FROM + 2)
        ]
    )
    assert writers()  # the batch was written by the writers
    store.close()
    assert writers() == []
