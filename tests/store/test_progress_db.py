"""The run's progress database (store/progress.py): a checkpoint of the
journal's projection in tinydb, and the journal's head recorded outside the
journal, so that a cut journal is named instead of shown as a shorter run."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from tinydb import TinyDB, where

from runbook.run.events import HostFinished, OperatorDecision
from runbook.store import Store, StoreCorrupt
from runbook.store.progress import PROGRESS_NAME, ProgressStorage

from .helpers import change_blob, new_store, verify_on

REPO = Path(__file__).resolve().parents[2]


def _open_quietly(state: Path, **kw) -> tuple[Store, str]:
    with contextlib.redirect_stderr(io.StringIO()) as err:
        store = Store.open(state, **kw)
    return store, err.getvalue()


def _replayed(state: Path):
    """The state rebuilt from the journal alone (the progress database set aside)."""
    progress = next(state.glob(f"*/{PROGRESS_NAME}"))
    kept = progress.read_bytes()
    progress.unlink()
    try:
        store, said = _open_quietly(state, read_only=True)
        store.close()
        assert "rebuilt from the journal" in said
        return store.state
    finally:
        progress.write_bytes(kept)


def test_opening_reads_the_checkpoint_and_only_the_journal_after_it(tmp_path):
    with new_store(tmp_path) as store:
        verify_on(store, "ofed", ["gpu01", "gpu02"], "fail", reason="5.8")
        store.append(OperatorDecision("note", "ofed", "", "alice", "looked"))  # written at once
        checkpointed = store.run_info()["events"]
        # a long step: results between checkpoints are covered by the journal
        store.append(HostFinished("ofed", "verify", "gpu01", "pass", "", stdout="23.10\n"))
        assert (
            ProgressStorage(tmp_path / "run-1" / PROGRESS_NAME).read()["meta"]["1"]["events"] == checkpointed
        )
        ro, said = _open_quietly(tmp_path, read_only=True)  # the writer is still open (no close)
        with ro:
            assert said == "" and ro.progress_note is None
            assert ro.host_status("ofed", "gpu01").value == "pass"  # the tail was applied
            assert ro.state == _replayed(tmp_path)
            assert ro.results()[("ofed", "gpu02")]["reason"] == "5.8"  # records built on demand


def test_progress_is_queried_with_tinydbs_own_api(tmp_path):
    with new_store(tmp_path) as store:
        verify_on(store, "ofed", ["gpu01", "gpu02"], "pass")
        verify_on(store, "link", ["gpu01", "gpu02"], "fail", reason="ETH")
        store.append(OperatorDecision("waive", "link", "gpu02", "alice", "cable on order"))
    # the README's example
    db = TinyDB(tmp_path / "run-1" / "progress.json", storage=ProgressStorage)
    failing = db.table("progress").search(where("status") == "fail")
    assert [(d["step_id"], d["host"], d["reason"]) for d in failing] == [("link", "gpu01", "ETH")]
    waived = db.table("progress").get((where("host") == "gpu02") & (where("step_id") == "link"))
    assert waived["status"] == "waived" and waived["recorded_status"] == "fail"
    assert waived["step_sha256"] == "1" * 64 and waived["attempts"] == 1
    assert db.table("meta").get(doc_id=1)["events"] == 12


def test_hand_edited_progress_is_detected_and_rebuilt(tmp_path):
    with new_store(tmp_path) as store:
        verify_on(store, "ofed", ["gpu01"], "fail", reason="5.8")
    path = tmp_path / "run-1" / PROGRESS_NAME
    path.write_bytes(path.read_bytes().replace(b'"status":"fail"', b'"status":"pass"'))
    ro, said = _open_quietly(tmp_path, read_only=True)
    ro.close()
    assert ro.progress_note == "does not match its checksum (damaged or edited)"
    assert said.count("\n") == 1 and "rebuilt from the journal" in said
    assert ro.host_status("ofed", "gpu01").value == "fail"
    # a writer rebuilds it for good
    store, said = _open_quietly(tmp_path)
    store.close()
    assert "rebuilt" in said
    assert ProgressStorage(path).read()["progress"]["1"]["status"] == "fail"
    assert _open_quietly(tmp_path, read_only=True)[1] == ""


@pytest.mark.parametrize("damage", ["garbage", "empty", "other run", "older checkpoint"])
def test_a_damaged_missing_or_foreign_progress_file_never_changes_the_state(tmp_path, damage):
    with new_store(tmp_path) as store:
        verify_on(store, "ofed", ["gpu01"], "fail")
    path = tmp_path / "run-1" / PROGRESS_NAME
    older = path.read_bytes()
    with Store.open(tmp_path) as store:
        verify_on(store, "ofed", ["gpu01"], "pass")
    if damage == "garbage":
        path.write_bytes(b"\x00garbage")
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "other run":
        with new_store(tmp_path / "other", "run-2") as other:
            verify_on(other, "ofed", ["gpu01"], "unknown")
        path.write_bytes((tmp_path / "other" / "run-2" / PROGRESS_NAME).read_bytes())
    else:  # a valid checkpoint from before the last session: used, and the rest replayed
        path.write_bytes(older)
    ro, _ = _open_quietly(tmp_path, read_only=True)
    ro.close()
    assert ro.host_status("ofed", "gpu01").value == "pass"
    assert (ro.progress_note is None) == (damage == "older checkpoint")
    assert ro.state == _replayed(tmp_path)


WRITER = textwrap.dedent("""
    import sys, time
    from runbook.run.events import HostFinished, HostStarted, StepFinished
    from runbook.store import Store
    store = Store.open(sys.argv[1])
    i = 0
    print("ready", flush=True)
    while True:
        i += 1
        store.append_many([HostStarted("s", "verify", f"h{j}", "c") for j in range(50)])
        store.append_many([HostFinished("s", "verify", f"h{j}", "pass" if (i + j) % 3 else "fail",
                                        f"round {i}", stdout="x" * 300) for j in range(50)])
        store.checkpoint()  # as often as possible: the kill must land inside some writes
""")


def test_killed_while_writing_the_progress_database_opens_with_the_same_state(tmp_path):
    with new_store(tmp_path):
        pass
    rng = random.Random(12)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for _ in range(6):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert proc.stdout.readline() == b"ready\n"
            time.sleep(rng.uniform(0.2, 0.8))
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        ro, said = _open_quietly(tmp_path, read_only=True)
        ro.close()
        # intact (the old or the new checkpoint, plus the journal after it) or rebuilt
        assert ro.progress_note in (None, "does not match the journal"), said
        assert ro.state == _replayed(tmp_path)
        assert ro.run_info()["events"] > 1


def _drop_last_lines(journal: Path, n: int) -> None:
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join(lines[:-n]))


@pytest.mark.parametrize("also_lost", ["nothing", "progress database", "both records"])
def test_a_journal_with_its_last_lines_dropped_is_named(tmp_path, also_lost):
    with new_store(tmp_path) as store:
        verify_on(store, "ofed", ["gpu01", "gpu02"], "fail")
        verify_on(store, "ofed", ["gpu01", "gpu02"], "pass")
    run = tmp_path / "run-1"
    _drop_last_lines(run / "journal.jsonl", 2)
    if also_lost != "nothing":
        (run / PROGRESS_NAME).unlink()
    if also_lost == "both records":
        (run / "journal.head").unlink()
        # nothing outside the journal is left to tell: the shorter run is all there is
        ro, _ = _open_quietly(tmp_path, read_only=True)
        ro.close()
        assert ro.run_info()["events"] == 6
        return
    for read_only in (True, False):
        with pytest.raises(
            StoreCorrupt,
            match=r"the journal ends at event 6, but 11 events were "
            r"recorded .*events 7 to 11 are missing",
        ):
            _open_quietly(tmp_path, read_only=read_only)


def test_a_journal_cut_in_the_middle_of_a_line_is_named_not_dropped(tmp_path):
    with new_store(tmp_path) as store:
        verify_on(store, "ofed", ["gpu01", "gpu02"], "fail")
    journal = tmp_path / "run-1" / "journal.jsonl"
    data = journal.read_bytes()
    journal.write_bytes(data[: len(data) - 40])  # an acknowledged write, half gone
    with pytest.raises(StoreCorrupt, match="events 5 to 6 are missing"):
        _open_quietly(tmp_path, read_only=True)


def _cli(*args: str, state: Path, steps: Path, inventory: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), RUNBOOK_OPERATOR="tester")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "runbook",
            *args,
            "--state",
            str(state),
            "--steps",
            str(steps),
            "--inventory",
            str(inventory),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.fixture
def project(tmp_path):
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "10-p.yaml").write_text(
        textwrap.dedent("""\
        phase: p
        title: P
        steps:
          - id: ofed
            title: OFED version
            why: w
            hosts: all
            verify:
              run: ofed_info -s
              expect:
                - {contains: "23.10"}
    """)
    )
    (tmp_path / "inv.yaml").write_text("all:\n  hosts:\n    gpu[01:02]:\n")
    return tmp_path / "steps", tmp_path / "inv.yaml"


def test_status_and_export_refuse_a_cut_journal_and_a_changed_output(tmp_path, project):
    steps, inv = project
    state = tmp_path / "state"
    with new_store(state) as store:
        verify_on(store, "ofed", ["gpu01", "gpu02"], "fail", stdout="MLNX_OFED 5.8\n" * 200)
        verify_on(store, "ofed", ["gpu01"], "pass", stdout="23.10\n")
    ok = _cli("status", "--json", state=state, steps=steps, inventory=inv)
    assert ok.returncode == 1 and json.loads(ok.stdout)["steps"][0]["hosts"]["gpu02"]["status"] == "fail"

    blobs = state / "run-1" / "blobs"
    change_blob(blobs, b"5.8", b"9.9")
    bad = _cli("status", "--json", state=state, steps=steps, inventory=inv)
    assert bad.returncode == 2 and "does not match its SHA-256" in bad.stderr
    assert "Traceback" not in bad.stderr and bad.stdout == ""
    change_blob(blobs, b"9.9", b"5.8")

    _drop_last_lines(state / "run-1" / "journal.jsonl", 1)
    for command in (["status", "--json"], ["export", "-o", str(tmp_path / "log.json")]):
        cut = _cli(*command, state=state, steps=steps, inventory=inv)
        assert cut.returncode == 2, cut.stderr
        assert "event 9 is missing" in cut.stderr and "Traceback" not in cut.stderr
    assert not (tmp_path / "log.json").exists()
