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
    real = {name: getattr(os, name) for name in ("write", "pwrite", "fsync", "fdatasync")}

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

    def finished(host, out):
        return HostFinished("topo", "verify", host, "pass", "", "nvidia-smi topo -m", 0, out, "", 1.0, 2.0)

    store.append(finished("gpu01", "x" * 5000))
    run = str(tmp_path / "run-1")
    assert [(name, path.replace(run, "RUN")) for name, path, _ in syscalls] == [
        ("pwrite", "RUN/blobs/pack"),
        ("fdatasync", "RUN/blobs/pack"),  # the blob
        ("fsync", "RUN/blobs"),  # the pack's new name made durable
        ("write", "RUN/journal.jsonl"),
        ("fdatasync", "RUN/journal.jsonl"),
    ]  # then the line
    syscalls.clear()
    store.append(finished("gpu02", "y" * 5000))
    assert [(name, path.replace(run, "RUN")) for name, path, _ in syscalls] == [
        ("pwrite", "RUN/blobs/pack"),
        ("fdatasync", "RUN/blobs/pack"),  # appended to the pack: no new name, no directory sync
        ("write", "RUN/journal.jsonl"),
        ("fdatasync", "RUN/journal.jsonl"),
    ]
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


def test_a_batch_of_blobs_is_one_write_and_one_sync_whatever_their_number(tmp_path, syscalls):
    """store/blobs.py: a batch's new blobs are appended to the pack together (a file
    each cost an inode, an fsync and a rename), and each is read back as written."""
    import hashlib

    from runbook.store.blobs import BlobStore

    from .helpers import pack_records

    datas = [f"output {i}\n".encode() * 50 for i in range(200)]
    shas = [hashlib.sha256(d).hexdigest() for d in datas]
    blobs = BlobStore(tmp_path / "blobs")
    syscalls.clear()
    blobs.put_many(list(zip(shas, datas)))
    assert [(name, path.rsplit("/", 1)[1]) for name, path, _ in syscalls] == [
        ("pwrite", "pack"),
        ("fdatasync", "pack"),
        ("fsync", "blobs"),
    ]
    assert list(pack_records(tmp_path / "blobs")) == shas
    assert all(BlobStore(tmp_path / "blobs").get(sha).encode() == d for sha, d in zip(shas, datas))


def test_a_killed_writers_incomplete_record_is_cut_off_by_the_next_writer(tmp_path):
    """A crash inside an append leaves part of a record that no journal line names;
    the next writer cuts it off, so its own records are read back whole."""
    import hashlib

    from runbook.store.blobs import BlobStore

    from .helpers import pack_records

    def blob(text):
        return hashlib.sha256(text.encode()).hexdigest(), text.encode()

    first, lost, later = blob("a" * 3000), blob("b" * 3000), blob("c" * 3000)
    BlobStore(tmp_path / "blobs").put_many([first])
    pack = tmp_path / "blobs" / "pack"
    whole = pack.read_bytes()
    with open(pack, "ab") as f:  # the killed writer got this far
        f.write(b"%s %d\n" % (lost[0].encode(), len(lost[1])) + lost[1][:1000])
    reader = BlobStore(tmp_path / "blobs")
    assert reader.names() == {first[0]} and reader.get(first[0]) == "a" * 3000
    assert pack.read_bytes()[: len(whole)] == whole and len(pack.read_bytes()) > len(
        whole
    )  # a reader cuts nothing
    writer = BlobStore(tmp_path / "blobs")
    writer.put_many([later])
    assert list(pack_records(tmp_path / "blobs")) == [first[0], later[0]]
    assert BlobStore(tmp_path / "blobs").get(later[0]) == "c" * 3000


def test_a_failed_blob_write_leaves_nothing_taken_for_written(tmp_path, monkeypatch):
    """A full disk during the append: the error reaches the caller (the store records
    nothing, store.py), and the blobs are written by the next batch that has them."""
    import hashlib

    from runbook.store.blobs import BlobStore

    data = b"d" * 3000
    sha = hashlib.sha256(data).hexdigest()
    blobs = BlobStore(tmp_path / "blobs")
    real = os.pwrite

    def full(fd, view, offset):
        real(fd, bytes(view[:100]), offset)  # part of it reached the disk
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "pwrite", full)
    with pytest.raises(OSError, match="No space"):
        blobs.put_many([(sha, data)])
    monkeypatch.undo()
    blobs.put_many([(sha, data)])
    assert BlobStore(tmp_path / "blobs").get(sha) == "d" * 3000
