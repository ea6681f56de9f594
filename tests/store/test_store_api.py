"""The Store API as the engine, CLI, TUI and exporter call it."""

from __future__ import annotations

import hashlib
import json
import re
import time

import pytest
from tinydb import where

from runbook.definition.model import Status
from runbook.errors import UsageError
from runbook.run.events import (
    HostFinished,
    HostKeyRecorded,
    HostOutput,
    HostStarted,
    OperatorDecision,
    PendingActionChanged,
    RunFinished,
)
from runbook.store import NoRun, Store, StoreError, operator_name
from runbook.store.canonical import GENESIS, header_genesis, journal_entry_hash
from runbook.store.journal import INLINE_MAX, OutputMemo, stored_event

from .helpers import BOOK, INV, new_store, pack_records, verify_on


def test_create_records_the_run_and_reopens_it(tmp_path):
    with new_store(tmp_path, run_id=None) as store:
        run_id = store.run_id
        assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{4}", run_id)
        info = store.run_info()
    assert (info["site"], info["operator"], info["inventory_sha256"], info["runbook_sha256"]) == (
        "seed-dc",
        "alice",
        INV,
        BOOK,
    )
    assert info["events"] == 1 and info["ended"] is None
    with Store.open(tmp_path) as store:
        assert store.run_info()["run_id"] == run_id
        assert store.journal()[0]["event"]["type"] == "RunStarted"
        # the first entry is chained to the header line: the chain covers it
        assert store.journal()[0]["prev"] == header_genesis(store.header) != GENESIS


def test_open_picks_the_latest_run_and_names_a_missing_one(tmp_path):
    new_store(tmp_path, "zzz-old").close()
    time.sleep(0.01)
    new_store(tmp_path, "aaa-new").close()
    with Store.open(tmp_path) as store:
        assert store.run_id == "aaa-new"  # by creation time, not by name
    with pytest.raises(NoRun, match="no run 'nope'.*zzz-old"):
        Store.open(tmp_path, "nope")
    with pytest.raises(NoRun, match="no such state directory"):
        Store.open(tmp_path / "absent")
    (tmp_path / "empty").mkdir()
    with pytest.raises(NoRun, match="no run has been started"):
        Store.open(tmp_path / "empty")
    with pytest.raises(StoreError, match="exists already"):
        new_store(tmp_path, "aaa-new")
    with pytest.raises(UsageError, match="bad run id"):
        new_store(tmp_path, "../escape")


def test_list_runs(tmp_path):
    with new_store(tmp_path, "r1") as s:
        s.append(RunFinished("pass"))
    with new_store(tmp_path, "r2") as s:
        verify_on(s, "ofed", ["gpu01", "gpu02"])
        runs = Store.list_runs(tmp_path)
        assert [r.run_id for r in runs] == ["r1", "r2"]
        assert runs[0].status == "finished: pass" and runs[0].events == 2
        assert runs[1].status == "open" and runs[1].events == 6
        assert runs[1].in_use.startswith("pid ")  # r2 is held open by this process
        assert runs[1].site == "seed-dc" and runs[1].operator == "alice"
    assert Store.list_runs(tmp_path / "nothing") == []


def test_append_returns_chained_entries_and_skips_live_output(tmp_path):
    with new_store(tmp_path) as store:
        assert store.append(HostOutput("s", "verify", "gpu01", "stdout", "line")) is None
        e = store.append(HostKeyRecorded("gpu01", "SHA256:abc", "known_hosts"))
        assert e["seq"] == 2 and e["hash"] == journal_entry_hash(2, e["prev"], e["event"])
        entries = store.append_many(
            [
                HostOutput("s", "verify", "gpu01", "stdout", "x"),
                HostKeyRecorded("gpu02", "SHA256:def", "pinned"),
            ]
        )
        assert [x["seq"] for x in entries] == [3]
        assert store.head() == entries[-1]["hash"]
        assert store.append_many([]) == []
        with pytest.raises(TypeError):
            store.append({"type": "RunFinished"})
        assert store.host_keys()["gpu02"]["fingerprint"] == "SHA256:def"
        assert [x["seq"] for x in store.journal()] == [1, 2, 3]
        assert store.verify_chain() == store.head()


def test_results_keep_details_and_move_big_outputs_to_blobs(tmp_path):
    big = "GPU0\tX\tNV12\n" * 400
    with new_store(tmp_path) as store:
        verify_on(store, "topo", ["gpu01"], "fail", stdout=big, reason="GPU0-GPU1: expected NV12, found SYS")
        verify_on(store, "ofed", ["gpu01"], stdout="MLNX_OFED_LINUX-23.10\n")
    sha = hashlib.sha256(big.encode()).hexdigest()
    (start, length), pack = (
        pack_records(tmp_path / "run-1" / "blobs")[sha],
        tmp_path / "run-1" / "blobs" / "pack",
    )
    assert pack.read_bytes()[start : start + length].decode() == big
    with Store.open(tmp_path) as store:
        r = store.results()[("topo", "gpu01")]
        assert r["stdout"] == big and r["output_sha256"] == sha
        assert (r["status"], r["exit_status"], r["command"], r["action"]) == (
            "fail",
            1,
            "check topo",
            "verify",
        )
        assert r["reason"] == "GPU0-GPU1: expected NV12, found SYS"
        assert (r["started"], r["ended"], r["attempts"], r["runs"]) == (1.0, 2.0, 1, 1)
        assert store.results(outputs=False)[("topo", "gpu01")].get("stdout") is None
        finished = [e["event"] for e in store.journal() if e["event"]["type"] == "HostFinished"]
        assert "stdout" not in finished[0] and finished[0]["stdout_sha256"] == sha  # in a blob
        assert finished[1]["stdout"] == "MLNX_OFED_LINUX-23.10\n"  # small: inline too
        assert store.output(sha) == big
        assert len(big.encode()) > INLINE_MAX


def test_status_rules_skip_waive_expiry_and_later_results(tmp_path):
    with new_store(tmp_path) as store:
        verify_on(store, "nccl", ["gpu01", "gpu02", "gpu03"], "fail", reason="busbw low")
        verify_on(store, "nccl", ["gpu01"], "pass")
        assert store.step_hosts("nccl") == {"gpu01": Status.PASS, "gpu02": Status.FAIL, "gpu03": Status.FAIL}
        store.append(OperatorDecision("waive", "nccl", "gpu[01-02]", "bob", "RMA 4411"))
        store.append(OperatorDecision("waive", "nccl", "gpu03", "bob", "old", expires=time.time() - 1))
        assert store.host_status("nccl", "gpu01") == Status.PASS  # a pass needs no waiver
        assert store.host_status("nccl", "gpu02") == Status.WAIVED
        assert store.host_status("nccl", "gpu03") == Status.FAIL  # expired
        store.append(OperatorDecision("skip", "ibdiag", "", "carol", "no UFM at this site"))
        assert store.host_status("ibdiag", "gpu09") == Status.SKIPPED  # "" = every host of the step
        store.append(OperatorDecision("note", "nccl", "", "carol", "rail 3 cable on order"))
        kinds = [(d["kind"], d["expired"]) for d in store.decisions()]
        assert kinds == [("waive", False), ("waive", True), ("skip", False), ("note", False)]
        assert store.step_statuses()["nccl"] == Status.FAIL  # gpu03 still fails
    with Store.open(tmp_path, read_only=True) as store:  # the same after reopening
        assert store.host_status("nccl", "gpu02") == Status.WAIVED
        assert store.step_hosts("ibdiag") == {}


def test_before_values_for_rollback(tmp_path):
    with new_store(tmp_path) as store:
        verify_on(store, "link-type", ["gpu07"], "fail", before={"LINK_TYPE_P1": "ETH(2)"})
        verify_on(store, "link-type", ["gpu07"], "pass", action="apply")
        assert store.before("link-type", "gpu07") == {"LINK_TYPE_P1": "ETH(2)"}
        assert store.before("link-type", "gpu01") is None
    with Store.open(tmp_path) as store:
        assert store.before("link-type", "gpu07") == {"LINK_TYPE_P1": "ETH(2)"}
        assert store.results()[("link-type", "gpu07")]["action"] == "apply"


def test_snapshot_is_json_and_matches_the_journal(tmp_path):
    big = "x" * (INLINE_MAX + 1)
    with new_store(tmp_path) as store:
        verify_on(store, "ofed", ["gpu01", "gpu02"], stdout=big)
        store.append(PendingActionChanged("ofed", "gpu02", "reboot", "owed"))
        store.append(OperatorDecision("note", "ofed", "", "alice", "checked"))
        store.append(HostKeyRecorded("gpu01", "SHA256:k1", "known_hosts"))
        snap = json.loads(json.dumps(store.snapshot()))
    sha = hashlib.sha256(big.encode()).hexdigest()
    assert snap["outputs"] == {sha: big}
    assert [r["stdout"] for r in snap["results"]] == [big, big]
    assert snap["statuses"] == {"ofed": {"gpu01": "pass", "gpu02": "pass"}}
    assert snap["pending_actions"][0]["host"] == "gpu02"
    assert snap["head"] == snap["journal"][-1]["hash"] == snap["run"]["head"]
    prev = header_genesis(snap["journal_header"])
    for e in snap["journal"]:
        assert e["prev"] == prev and e["hash"] == journal_entry_hash(e["seq"], prev, e["event"])
        prev = e["hash"]


def test_snapshot_exports_and_verifies(tmp_path):
    """The exporter's own checks accept what the store hands it (steps and
    inventory come from the loaded runbook and inventory)."""
    from runbook.definition.model import Host, Inventory, Phase, Runbook, Step
    from runbook.export.checks import check_document
    from runbook.export.completion_log import build_document

    steps = [
        Step(
            i,
            i.upper(),
            "sw",
            "Software",
            "why",
            "compute",
            None,
            definition={"id": i, "verify": {"run": f"{i} -s"}},
        )
        for i in ("ofed", "link")
    ]
    book = Runbook((Phase("sw", "Software", "10-sw.yaml", tuple(steps)),))
    inv = Inventory(
        {
            h: Host(h, {"ansible_host": "127.0.0.2", "ansible_password": "hunter2"})
            for h in ("gpu01", "gpu02")
        },
        {},
        ["inventory/x.yaml"],
        INV,
    )
    with new_store(tmp_path) as store:
        store.append(HostKeyRecorded("gpu01", "SHA256:k1", "known_hosts"))
        verify_on(store, "ofed", ["gpu01", "gpu02"], sha=steps[0].sha256, stdout="y" * 3000)
        verify_on(store, "link", ["gpu02"], "fail", sha=steps[1].sha256, before={"P1": "ETH(2)"})
        verify_on(store, "link", ["gpu02"], "pass", action="apply", sha=steps[1].sha256)
        store.append(PendingActionChanged("link", "gpu02", "reboot", "owed"))
        store.append(OperatorDecision("waive", "ofed", "gpu02", "bob", "RMA", expires=time.time() + 60))
        store.append(HostStarted("link", "verify", "gpu01", "link -s"))
        store._writer.close()
        store.lock.release()
    with Store.open(tmp_path) as store:  # gpu01 comes back interrupted
        store.append(RunFinished("unknown"))
        snap = store.snapshot(book, inv)
    assert "hunter2" not in json.dumps(snap)
    doc = build_document(
        snap,
        {
            "identity": "t",
            "key_type": "ssh-ed25519",
            "fingerprint": "SHA256:x",
            "public_key": "",
            "allowed_signers": "",
        },
    )
    assert check_document(json.loads(json.dumps(doc))).problems == []
    assert doc["run"]["ended"] == snap["run"]["ended"] is not None


def test_read_only_refuses_writes_and_needs_no_lock(tmp_path):
    with new_store(tmp_path) as writer, Store.open(tmp_path, read_only=True) as reader:
        assert reader.run_id == "run-1"
        with pytest.raises(StoreError, match="read-only"):
            reader.append(RunFinished("pass"))
    writer.close()
    with pytest.raises(StoreError, match="closed"):
        writer.append(RunFinished("pass"))


def test_tinydb_view(tmp_path):
    with new_store(tmp_path) as store:
        verify_on(store, "ofed", ["gpu01", "gpu02"])
        db = store.tinydb()
        hits = db.table("journal").search(where("event")["host"] == "gpu02")
        assert [h["event"]["type"] for h in hits] == ["HostStarted", "HostFinished"]
        with pytest.raises(StoreError, match="read-only"):
            db.table("journal").insert({"x": 1})


def test_operator_name(monkeypatch):
    monkeypatch.setenv("RUNBOOK_OPERATOR", "dana")
    assert operator_name("erin") == "erin"
    assert operator_name() == "dana"
    monkeypatch.delenv("RUNBOOK_OPERATOR")
    monkeypatch.setenv("LOGNAME", "frank")
    assert operator_name(None) == "frank"


def test_unjsonable_values_are_stored_not_lost(tmp_path):
    with new_store(tmp_path) as store:
        store.append(
            HostFinished(
                "nccl",
                "verify",
                "gpu01",
                "fail",
                "busbw nan",
                "x",
                0,
                "bad \udcff byte",
                "",
                1.0,
                2.0,
                record={"busbw": 1.0},
                before={"busbw": float("nan"), 3: "three"},
            )
        )
    with Store.open(tmp_path) as store:
        r = store.results()[("nccl", "gpu01")]
        assert r["before"] == {"busbw": "nan", "3": "three"}
        assert r["record"] is None  # parsed records are re-derived from the output, never journaled
        assert r["stdout"] == "bad \ufffd byte"
        store.verify_chain()


def test_events_that_could_not_be_replayed_are_refused_before_writing(tmp_path):
    with new_store(tmp_path) as store:
        head = store.head()
        with pytest.raises(StoreError, match="cannot record HostFinished: status 'done' is not one of"):
            store.append(HostFinished("s", "verify", "gpu01", "done", "", "", 0))
        with pytest.raises(StoreError, match=r"hosts 'gpu\[01-' is not a NodeSet"):
            store.append_many(
                [
                    HostKeyRecorded("gpu01", "SHA256:a", "pinned"),
                    OperatorDecision("skip", "s", "gpu[01-", "bob", "why"),
                ]
            )
        assert store.head() == head  # the whole batch was refused
    with Store.open(tmp_path) as store:
        assert store.run_info()["events"] == 1


def test_os_errors_are_messages(tmp_path):
    (tmp_path / "afile").write_text("")
    with pytest.raises(StoreError, match="afile"):
        new_store(tmp_path / "afile" / "state")


def test_an_output_many_hosts_share_is_encoded_once_and_stored_once(tmp_path):
    # A launch step finishes every host of a job with the job's one output (the
    # launcher's): the batch encodes it once, not once per host (at 1,000 hosts
    # that was ~1.7 GB of copies), and it lands in one blob every entry names.
    job_out = "#  Rank  0 Group  0 Pid  4242 on gpu01 device  0 [0x1b] NVIDIA L40S\n" * 200
    hosts = [f"gpu{i:02d}" for i in range(1, 9)]
    memo = OutputMemo()
    raws = []
    for h in hosts:
        ev = HostFinished("nccl", "verify", h, "pass", "", "mpirun", 0, job_out, "", 1.0, 2.0)
        _d, blobs = stored_event(ev, memo)
        raws += [raw for _sha, raw in blobs]
    assert len(raws) == len(hosts) and all(raw is raws[0] for raw in raws)
    other = "".join(["#  Rank  0 Group  0 Pid  4242 on gpu01 device  0 [0x1b] NVIDIA L40S\n"] * 200)
    assert other == job_out and other is not job_out  # equal text, another object: same blob
    _d, [(sha_other, raw_other)] = stored_event(
        HostFinished("nccl", "verify", "gpu09", "pass", "", "mpirun", 0, other, "", 1.0, 2.0), memo
    )
    assert raw_other == raws[0] and raw_other is not raws[0]

    with new_store(tmp_path) as store:
        verify_on(store, "nccl", hosts, stdout=job_out)
    sha = hashlib.sha256(job_out.encode()).hexdigest()
    assert sha_other == sha
    assert [p.name for p in (tmp_path / "run-1" / "blobs").iterdir()] == ["pack"]
    assert list(pack_records(tmp_path / "run-1" / "blobs")) == [sha]
    with Store.open(tmp_path) as store:
        finished = [e["event"] for e in store.journal() if e["event"]["type"] == "HostFinished"]
        assert [f["stdout_sha256"] for f in finished] == [sha] * len(hosts)
        assert all(store.results()[("nccl", h)]["stdout"] == job_out for h in hosts)
