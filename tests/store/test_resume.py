"""Reopening a run: every step's state as it was, running -> interrupted,
pending actions kept until done, stale results named."""

from __future__ import annotations

from runbook.definition.model import Status
from runbook.run.events import HostFinished, PendingActionChanged, StepStarted
from runbook.store import Store

from .helpers import INV, new_store, start_only, verify_on


def test_running_hosts_come_back_interrupted_once(tmp_path):
    with new_store(tmp_path) as store:
        verify_on(store, "ofed", ["gpu01", "gpu02", "gpu03"])
        start_only(store, "link-type", ["gpu01", "gpu02", "gpu03"])
        store.append(HostFinished("link-type", "verify", "gpu02", "fail", "ETH(2)", "q", 0))
        store._writer.close()  # "killed": no more writes, lock dropped below
        store.lock.release()
    with Store.open(tmp_path) as store:
        assert store.came_back == {"link-type": ["gpu01", "gpu03"]}
        assert store.interrupted() == {"link-type": ["gpu01", "gpu03"]}
        assert store.step_hosts("link-type") == {
            "gpu01": Status.INTERRUPTED,
            "gpu02": Status.FAIL,
            "gpu03": Status.INTERRUPTED,
        }
        assert store.step_hosts("ofed") == dict.fromkeys(["gpu01", "gpu02", "gpu03"], Status.PASS)
        ev = store.journal()[-1]["event"]
        assert ev["type"] == "RunInterrupted"
        assert "2 command(s) were in flight (link-type on gpu[01,03])" in ev["reason"]
        r = store.results()[("link-type", "gpu01")]
        assert (r["status"], r["command"]) == ("interrupted", "check link-type")
        n = store.run_info()["events"]
    with Store.open(tmp_path) as store:  # nothing new was running: no second event
        assert store.run_info()["events"] == n and store.came_back == {}
        assert store.interrupted() == {"link-type": ["gpu01", "gpu03"]}  # still to be re-run
        verify_on(store, "link-type", ["gpu01"])
        assert store.interrupted() == {"link-type": ["gpu03"]}


def test_read_only_view_of_a_dead_run_shows_interrupted_without_writing(tmp_path):
    with new_store(tmp_path) as store:
        start_only(store, "ofed", ["gpu01"])
        with Store.open(tmp_path, read_only=True) as live:  # the writer is alive: still running
            assert live.host_status("ofed", "gpu01") == Status.RUNNING
    size = (tmp_path / "run-1" / "journal.jsonl").stat().st_size
    with Store.open(tmp_path, read_only=True) as dead:
        assert dead.host_status("ofed", "gpu01") == Status.INTERRUPTED
    assert (tmp_path / "run-1" / "journal.jsonl").stat().st_size == size


def test_pending_actions_survive_until_done(tmp_path):
    with new_store(tmp_path) as store:
        store.append_many(
            [
                PendingActionChanged("link-type", h, "reboot", "owed", "LINK_TYPE set")
                for h in ("gpu07", "gpu31")
            ]
        )
    with Store.open(tmp_path) as store:
        assert [(p["host"], p["state"]) for p in store.pending_actions()] == [
            ("gpu07", "owed"),
            ("gpu31", "owed"),
        ]
        store.append(PendingActionChanged("link-type", "gpu07", "reboot", "failed", "no ping after 900 s"))
        store.append(PendingActionChanged("link-type", "gpu31", "reboot", "done"))
    with Store.open(tmp_path) as store:
        (p,) = store.pending_actions()
        assert (p["host"], p["state"], p["reason"]) == ("gpu07", "failed", "no ping after 900 s")
        assert p["since"] < p["time"]  # owed since the first time it was owed
        store.append(PendingActionChanged("link-type", "gpu07", "reboot", "done"))
        assert store.pending_actions() == []


def test_stale_steps(tmp_path):
    with new_store(tmp_path) as store:
        verify_on(store, "ofed", ["gpu01", "gpu02"], sha="1" * 64)
        verify_on(store, "topo", ["gpu01"], sha="2" * 64)
        verify_on(store, "gone", ["gpu01"], sha="3" * 64)
    with Store.open(tmp_path) as store:
        current = {"ofed": "1" * 64, "topo": "9" * 64}
        assert store.stale_steps(current, INV) == {
            "topo": "the definition of step topo changed since the results for gpu01 were recorded "
            "(recorded 222222222222, now 999999999999)",
            "gone": "step gone is no longer in the runbook; its results for gpu01 were recorded for "
            "a definition that is gone",
        }
        assert store.results()[("topo", "gpu01")]["stale"].startswith("the definition of step topo")
        assert store.results()[("ofed", "gpu01")]["stale"] is None
        verify_on(store, "topo", ["gpu01"], sha="9" * 64)  # re-verified with the new definition
        assert "topo" not in store.stale_steps(current, INV)
        moved = store.stale_steps({**current, "gone": "3" * 64}, "c" * 64)
        assert set(moved) == {"ofed", "topo", "gone"}
        assert "the inventory changed since the results for gpu[01-02] were recorded" in moved["ofed"]
        assert store.snapshot()["stale"] == moved


def test_step_started_without_hash_is_never_called_stale(tmp_path):
    with new_store(tmp_path) as store:
        store.append(StepStarted("manual", "verify", ("gpu01",)))
        store.append(HostFinished("manual", "verify", "gpu01", "pass", "", "", 0))
        assert store.stale_steps({"manual": "4" * 64}, INV) == {}
