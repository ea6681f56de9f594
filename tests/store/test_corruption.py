"""Damaged or foreign files: a clear error naming the file and what is wrong,
never a traceback, never a silent reset -- except an incomplete last line,
which was never acknowledged and is dropped."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest

from runbook.errors import EXIT_USAGE, RunbookError
from runbook.store import Store, StoreCorrupt
from runbook.store.storage import encode_batch

from .helpers import change_blob, new_store, pack_records, verify_on


@pytest.fixture
def run(tmp_path):
    """Header, RunStarted, then 2 batch lines (events 2-4 and 5-6); the journal path."""
    with new_store(tmp_path) as store:
        verify_on(store, "ofed", ["gpu01", "gpu02"], stdout="z" * 2000)
        store.append_many([])
    return tmp_path / "run-1" / "journal.jsonl"


def lines(path):
    return path.read_bytes().splitlines(keepends=True)


def open_fails(state, match):
    with pytest.raises(StoreCorrupt, match=match) as info:
        Store.open(state)
    assert info.value.exit_code == EXIT_USAGE and isinstance(info.value, RunbookError)
    return str(info.value)


def test_torn_last_line_is_dropped_and_cut_off(run):
    good = run.read_bytes()
    with open(run, "ab") as f:
        f.write(b'{"sum":"0123","batch":[{"seq":7,"prev"')  # a write cut short by a kill
    with Store.open(run.parent.parent, read_only=True) as ro:  # a reader drops it, changes nothing
        assert ro.run_info()["events"] == 6 and "never been acknowledged" in ro.recovered
    assert run.read_bytes().startswith(good) and len(run.read_bytes()) > len(good)
    with Store.open(run.parent.parent) as store:
        assert "incomplete last write" in store.recovered
        last = store.journal()[-1]["event"]
        assert last["type"] == "RunInterrupted" and "incomplete last write" in last["reason"]
        store.verify_chain()
    assert run.read_bytes().startswith(good)  # cut back, then one RunInterrupted line
    assert len(lines(run)) == len(good.splitlines()) + 1


def test_nul_tail_from_a_power_cut_is_dropped(run):
    with open(run, "ab") as f:
        f.write(b"\0" * 512)
    with Store.open(run.parent.parent) as store:
        assert store.recovered and store.verify_chain()


def test_garbage_in_the_middle(run):
    ls = lines(run)
    ls[2] = b"#garbage#\n"
    run.write_bytes(b"".join(ls))
    msg = open_fails(run.parent.parent, "not a journal line")
    assert msg.startswith(f"{run}:3: ")


def test_changed_byte_in_the_middle_fails_its_checksum(run):
    data = run.read_bytes().replace(b'"gpu02"', b'"gpu03"', 1)
    run.write_bytes(data)
    open_fails(run.parent.parent, r"journal.jsonl:\d+: the line does not match its checksum")


def test_truncated_in_the_middle(run):
    ls = lines(run)
    run.write_bytes(b"".join(ls[:2] + [ls[2][:40] + b"\n"] + ls[3:]))
    open_fails(run.parent.parent, r"journal.jsonl:3: not a journal line")


def test_missing_lines_break_the_chain(run):
    ls = lines(run)
    run.write_bytes(b"".join(ls[:2] + ls[3:]))  # one committed batch removed
    open_fails(run.parent.parent, r"journal.jsonl:3: event 5 follows event 1: events are missing")


def test_wrong_prev_breaks_the_chain(run):
    ls = lines(run)
    batch = json.loads(ls[2][ls[2].index(b'"batch":') + 8 : -2])
    batch[0]["prev"] = "f" * 64
    ls[2] = encode_batch(batch)  # a well-formed line, re-summed: only the chain tells
    run.write_bytes(b"".join(ls))
    open_fails(run.parent.parent, r"journal.jsonl:3: event 2: hash chain broken")


def test_edited_event_with_a_fresh_checksum_fails_verify_chain(run):
    ls = lines(run)
    batch = json.loads(ls[3][ls[3].index(b'"batch":') + 8 : -2])
    batch[0]["event"]["status"] = "pass" if batch[0]["event"]["status"] != "pass" else "fail"
    ls[3] = encode_batch(batch)
    run.write_bytes(b"".join(ls))
    with Store.open(run.parent.parent) as store:  # opening checks links, not every hash
        with pytest.raises(StoreCorrupt, match=r"journal.jsonl:4: event 5: hash does not match its content"):
            store.verify_chain()


def test_empty_file(run):
    run.write_bytes(b"")
    open_fails(run.parent.parent, r"journal.jsonl: the file is empty: not a runbook journal")


def test_not_our_json(run):
    run.write_text(json.dumps({"_default": {"1": {"a": 1}}}) + "\n")  # tinydb's own format
    msg = open_fails(run.parent.parent, "not a runbook journal")
    assert "tinydb JSON file from another tool" in msg
    run.write_text("hello\n")
    open_fails(run.parent.parent, r"journal.jsonl:1: not a runbook journal: the first line is not JSON")


def test_header_of_another_format(run):
    ls = lines(run)
    ls[0] = b'{"runbook_store": 9}\n'
    run.write_bytes(b"".join(ls))
    open_fails(run.parent.parent, "journal format 9; this runbook reads formats 1, 2")


def test_header_only(run):
    run.write_bytes(lines(run)[0])
    open_fails(run.parent.parent, "the journal has no events")


def test_missing_blob(run):
    pack = run.parent / "blobs" / "pack"
    pack.unlink()
    msg = open_fails(run.parent.parent, "output blob.* missing")
    assert str(pack.parent) in msg and "ofed on gpu0" in msg


def test_a_blob_cut_off_the_pack_is_missing(run):
    """A pack cut inside its last record (a copy stopped short): that blob is missing."""
    pack = run.parent / "blobs" / "pack"
    pack.write_bytes(pack.read_bytes()[:-10])
    msg = open_fails(run.parent.parent, "output blob.* missing")
    assert str(pack) in msg and "ofed on gpu0" in msg


def test_changed_blob(run):
    blobs = run.parent / "blobs"
    assert list(pack_records(blobs)) == [hashlib.sha256(b"z" * 2000).hexdigest()]
    change_blob(blobs, b"z" * 8, b"tampered")
    with Store.open(run.parent.parent) as store:
        with pytest.raises(StoreCorrupt, match="does not match its SHA-256"):
            store.results()
        with pytest.raises(StoreCorrupt, match="does not match its SHA-256"):
            store.verify_chain()


def test_unknown_event_type(run):
    ls = lines(run)
    batch = json.loads(ls[3][ls[3].index(b'"batch":') + 8 : -2])
    batch[0]["event"]["type"] = "FromTheFuture"
    ls[3] = encode_batch(batch)
    run.write_bytes(b"".join(ls))
    open_fails(run.parent.parent, "unknown event type 'FromTheFuture'")


def test_cli_style_message_without_traceback(run, tmp_path):
    """What a user sees: one line naming the file, exit code 2."""
    run.write_bytes(b"")
    code = (
        "import sys\nfrom runbook.store import Store\nfrom runbook.errors import RunbookError\n"
        "try:\n    Store.open(sys.argv[1])\nexcept RunbookError as e:\n"
        "    print(e, file=sys.stderr); sys.exit(e.exit_code)\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code, str(run.parent.parent)], capture_output=True, text=True, timeout=30
    )
    assert p.returncode == 2
    assert (
        p.stderr.strip() == f"{run}: the file is empty: not a runbook journal (a journal "
        "starts with a runbook_store header line)"
    )


def test_event_missing_a_field(run):
    ls = lines(run)
    batch = json.loads(ls[3][ls[3].index(b'"batch":') + 8 : -2])
    del batch[0]["event"]["host"]
    ls[3] = encode_batch(batch)
    run.write_bytes(b"".join(ls))
    open_fails(run.parent.parent, r"journal.jsonl:4: event 5 \(HostFinished\) does not fit its type")


def test_a_changed_header_breaks_the_chain(run):
    """The header line (run id, created: the log's start time) is covered by the
    hash chain: the first event's prev is the header's hash."""
    ls = lines(run)
    header = json.loads(ls[0])
    header["created"] += 3600
    ls[0] = json.dumps(header, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    run.write_bytes(b"".join(ls))
    open_fails(
        run.parent.parent, "event 1: hash chain broken: its prev is not the hash of the journal's header line"
    )
