"""One owner per state directory; a clear message naming the holder; a lock
left by a dead process is taken over."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap

import pytest

from runbook.errors import EXIT_LOCKED, LockHeld
from runbook.store import Store
from runbook.store.lock import StateLock, holder

from .helpers import new_store, start_only

HOLDER = textwrap.dedent("""
    import sys, time
    from runbook.store import Store
    store = Store.open(sys.argv[1])
    print("locked", flush=True)
    time.sleep(60)
""")


@pytest.fixture
def holder_process(tmp_path):
    new_store(tmp_path).close()
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "locked"
        yield p
    finally:
        if p.poll() is None:
            p.kill()
        p.wait(timeout=10)


def test_second_process_gets_lockheld_naming_the_holder(tmp_path, holder_process):
    with pytest.raises(LockHeld) as info:
        Store.open(tmp_path)
    msg = str(info.value)
    assert info.value.exit_code == EXIT_LOCKED == 4
    assert f"pid {holder_process.pid} on host {socket.gethostname()} since 20" in msg
    assert f"(-c {tmp_path})" in msg  # the holder's command line
    with pytest.raises(LockHeld):
        new_store(tmp_path, "another")  # creating a run in the same state dir too
    assert holder(tmp_path)["pid"] == holder_process.pid
    assert holder(tmp_path)["run"] == "run-1"
    with Store.open(tmp_path, read_only=True) as ro:  # reading needs no lock
        assert ro.run_id == "run-1"


def test_lock_of_a_killed_holder_is_taken_over(tmp_path, holder_process):
    holder_process.send_signal(signal.SIGKILL)
    holder_process.wait(timeout=10)
    assert holder(tmp_path) is None  # the kernel released the flock
    with Store.open(tmp_path) as store:
        assert store.lock.taken_over["pid"] == holder_process.pid
        assert store.run_info()["lock_taken_over"]["pid"] == holder_process.pid
        assert holder(tmp_path)["pid"] == os.getpid()
    assert holder(tmp_path) is None


def test_taken_over_lock_is_named_in_the_interruption(tmp_path):
    store = new_store(tmp_path)
    start_only(store, "ofed", ["gpu01"])
    # die as a killed process does: the kernel drops the flock, the name stays in the file
    store._writer.close()
    os.close(store.lock._fd)
    (tmp_path / "lock").write_text('{"pid": 999999, "host": "old-laptop", "since": 0, "run": "run-1"}')
    with Store.open(tmp_path) as reopened:
        reason = reopened.journal()[-1]["event"]["reason"]
        assert "ofed on gpu01" in reason and "taken over from pid 999999 on host old-laptop" in reason


def test_same_process_cannot_open_twice(tmp_path):
    with new_store(tmp_path), pytest.raises(LockHeld, match=f"pid {os.getpid()}"):
        Store.open(tmp_path)
    with Store.open(tmp_path):  # closed: free again
        pass


def test_lock_file_is_kept_and_emptied_on_release(tmp_path):
    lock = StateLock(tmp_path, command="runbook run --all")
    lock.acquire()
    assert '"command": "runbook run --all"' in (tmp_path / "lock").read_text()
    lock.release()
    assert (tmp_path / "lock").read_text() == ""
    lock2 = StateLock(tmp_path)
    lock2.acquire()
    assert lock2.taken_over is None  # a clean release is not a crash
    lock2.release()
