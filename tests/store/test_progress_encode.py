"""The progress database's bytes from kept encodings (progress.encode) are the
bytes of encoding the whole projection (progress._dumps(progress.to_data(...))),
checkpoint after checkpoint of a run whose results, decisions and hosts change."""

from __future__ import annotations

from runbook.run.events import HostFinished, HostStarted, OperatorDecision, RunInterrupted
from runbook.store import progress

from .helpers import new_store, verify_on

AT = 1_800_000_000.25


def _same(store, docs: progress.ProgressDocs) -> None:
    pos = dict(store._fed, run_id=store.directory.name)
    kept = progress.encode(store.state, store._blob_refs, pos, docs, at=AT)
    whole = progress._dumps(progress.to_data(store.state, store._blob_refs, pos, at=AT))
    assert kept == whole


def test_kept_encodings_give_the_whole_encoding(tmp_path):
    with new_store(tmp_path) as store:
        docs = store._docs  # fed by the store as events come in
        _same(store, docs)
        verify_on(store, "ofed", ["gpu01", "gpu02", "gpu03"], "pass", stdout="23.10\n" * 200)  # a blob
        _same(store, docs)
        verify_on(store, "ofed", ["gpu02"], "fail", reason="5.8 found")  # one document changes
        verify_on(store, "nccl", ["gpu01", "gpu04"], "pass", before={"mtu": 4096})  # pairs added
        _same(store, docs)
        _same(store, docs)  # nothing changed since
        store.append(OperatorDecision("waive", "ofed", "gpu02", "alice", "vendor fix due", expires=AT + 60))
        store.append(OperatorDecision("skip", "nccl", "", "bob", "no fabric yet"))  # a whole step
        _same(store, docs)
        store.append(HostStarted("ofed", "verify", "gpu05", "ofed_info -s"))  # running
        _same(store, docs)
        store.append(RunInterrupted("killed"))  # every running pair changes
        _same(store, docs)
        store.append(HostFinished("ofed", "verify", "gpu05", "unknown", "connection lost mid-command"))
        _same(store, docs)


def test_another_state_is_encoded_whole(tmp_path):
    with new_store(tmp_path / "a") as one, new_store(tmp_path / "b") as other:
        verify_on(one, "ofed", ["gpu01", "gpu02"], "pass")
        verify_on(other, "ofed", ["gpu09"], "fail", reason="old")
        docs = progress.ProgressDocs()
        _same(one, docs)
        _same(other, docs)  # the same ProgressDocs, handed another run's state
        _same(one, docs)
