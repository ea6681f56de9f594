"""An output blob already written (by this store, or found on disk) is not
looked up or written again (store/blobs.py)."""

from __future__ import annotations

import hashlib

from runbook.store.blobs import BlobStore


def _blob(text: str) -> tuple[str, bytes]:
    data = text.encode()
    return hashlib.sha256(data).hexdigest(), data


def test_a_blob_is_written_once_then_known(tmp_path, monkeypatch):
    blobs = BlobStore(tmp_path / "blobs")
    one, two = _blob("a" * 2000), _blob("b" * 2000)
    blobs.put_many([one, two, one])
    assert blobs.get(one[0]) == "a" * 2000 and blobs.get(two[0]) == "b" * 2000
    looked_up = []
    monkeypatch.setattr(BlobStore, "_scan", lambda self: looked_up.append("pack"))
    monkeypatch.setattr(BlobStore, "_own", lambda self, sha: looked_up.append(sha))
    blobs.put_many([one, two])
    assert looked_up == []  # no look at the disk for a name this store wrote


def test_a_blob_found_on_disk_is_not_written_again(tmp_path, monkeypatch):
    one = _blob("c" * 2000)
    BlobStore(tmp_path / "blobs").put_many([one])  # another writer (an earlier session)
    blobs = BlobStore(tmp_path / "blobs")
    written = []
    monkeypatch.setattr(BlobStore, "_write", lambda self, new: written.extend(new))
    blobs.put_many([one])
    blobs.put_many([one])
    assert written == []


def test_a_blob_in_its_own_file_is_read_and_not_written_again(tmp_path):
    """A run begun by a runbook that kept each blob in a file of its own, resumed
    by this one: its blobs are found there, and new ones go to the pack."""
    old, new = _blob("e" * 2000), _blob("f" * 2000)
    (tmp_path / "blobs").mkdir()
    (tmp_path / "blobs" / old[0]).write_bytes(old[1])
    blobs = BlobStore(tmp_path / "blobs")
    blobs.put_many([old, new])
    assert blobs.get(old[0]) == "e" * 2000 and blobs.get(new[0]) == "f" * 2000
    assert blobs.names() == {old[0], new[0]}
    assert old[0].encode() not in (tmp_path / "blobs" / "pack").read_bytes()


def test_a_failed_write_is_not_taken_for_written(tmp_path, monkeypatch):
    blobs = BlobStore(tmp_path / "blobs")
    one = _blob("d" * 2000)

    def full_disk(self, new):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(BlobStore, "_write", full_disk)
    try:
        blobs.put_many([one])
    except OSError:
        pass
    monkeypatch.undo()
    blobs.put_many([one])  # written now
    assert blobs.get(one[0]) == "d" * 2000
