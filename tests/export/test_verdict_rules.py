"""The log's verdicts are the rulebook's judgement of the journal inside the log,
so the signed report never says something other than `runbook status`."""

from runbook.definition.model import Status
from runbook.export.verdicts import final_verdicts, replay, step_statuses
from runbook.run.events import HostFinished, OperatorDecision, RunStarted
from runbook.run.state import RunState


def _entries(events):
    return [{"seq": i + 1, "event": e.to_dict()} for i, e in enumerate(events)]


def test_same_rules_as_run_state():
    events = [RunStarted("r", "s", "alice", "0", "", "", time=0)]
    events += [
        HostFinished("ofed", "verify", h, st, "", ended=t)
        for h, st, t in (
            ("gpu01", "pass", 1),
            ("gpu02", "fail", 2),
            ("gpu03", "fail", 3),
            ("gpu04", "unknown", 4),
        )
    ]
    events += [
        OperatorDecision(k, step, hosts, "alice", "why", time=t)
        for k, step, hosts, t in (
            ("waive", "ofed", "gpu[01-02]", 5),
            ("skip", "ofed", "gpu03", 6),
            ("note", "ofed", "", 7),
            ("note", "walkthrough", "", 8),
        )
    ]
    state = replay(_entries(events), frozenset({"walkthrough"}))
    results = [{"step_id": "ofed", "action": "verify", "host": f"gpu0{i}"} for i in range(1, 5)]
    log = final_verdicts(state, results, at=10)

    live = RunState(manual_steps={"walkthrough"})
    for e in events:
        live.apply(e)
    for host in ("gpu01", "gpu02", "gpu03", "gpu04"):
        assert log["ofed"][host]["status"] == live.status("ofed", host, 10).value, host
    assert log["ofed"]["gpu01"] == {"status": "pass", "reason": "", "source": "results[0]"}
    assert log["ofed"]["gpu02"]["status"] == "waived"
    assert log["ofed"]["gpu02"]["source"] == "decisions[0]"
    assert log["ofed"]["gpu03"]["status"] == "skipped"
    assert log["ofed"]["gpu04"]["status"] == "unknown"  # a note on a step that is not manual decides nothing
    # a note confirms a manual step (no host results: the whole step)
    assert step_statuses(["walkthrough", "ofed"], state, log, 10) == {
        "walkthrough": "pass",
        "ofed": "unknown",
    }
    assert live.status("walkthrough", "gpu01", 10) == Status.PASS


def test_an_apply_after_a_failing_verify_is_pending_in_the_log_too():
    events = [
        RunStarted("r", "s", "alice", "0", "", "", time=0),
        HostFinished("link", "verify", "gpu01", "fail", "ETH", ended=1),
        HostFinished("link", "apply", "gpu01", "pending", "applied; reboot owed; re-verify pending", ended=2),
        HostFinished("link", "verify", "gpu02", "fail", "ETH", ended=3),
        HostFinished("link", "apply", "gpu02", "unknown", "apply failed: unreachable", ended=4),
    ]
    state = replay(_entries(events))
    results = [
        {"step_id": "link", "action": a, "host": h} for h in ("gpu01", "gpu02") for a in ("verify", "apply")
    ]
    log = final_verdicts(state, results, at=10)
    assert log["link"]["gpu01"] == {
        "status": "pending",
        "reason": "applied; reboot owed; re-verify pending",
        "source": "results[1]",
    }
    assert log["link"]["gpu02"]["status"] == "unknown"


def test_an_expired_waiver_no_longer_covers_at_the_judgement_time():
    events = [
        RunStarted("r", "s", "alice", "0", "", "", time=0),
        HostFinished("ofed", "verify", "gpu01", "fail", "old", ended=1),
        OperatorDecision("waive", "ofed", "gpu01", "alice", "vendor ticket", expires=100.0, time=2),
    ]
    state = replay(_entries(events))
    results = [{"step_id": "ofed", "action": "verify", "host": "gpu01"}]
    assert final_verdicts(state, results, at=99.9)["ofed"]["gpu01"]["status"] == "waived"
    assert final_verdicts(state, results, at=100.0)["ofed"]["gpu01"]["status"] == "fail"


def test_a_step_that_targets_no_host_is_not_applicable_in_the_log():
    # the SM-node steps where the SM runs on a switch (the inventory's sm group has no hosts)
    state = replay(_entries([RunStarted("r", "s", "alice", "0", "", "", time=0)]), frozenset({"drill"}))
    targets = {"opensm-active": [], "ofed": ["gpu01"], "drill": []}
    assert step_statuses(["opensm-active", "ofed", "drill"], state, {}, 10, targets) == {
        "opensm-active": "not_applicable",
        "ofed": "pending",
        "drill": "pending",  # a manual step is still confirmed by a note on the whole step
    }
    # an older log without targets: judged by decisions as before
    assert step_statuses(["opensm-active"], state, {}, 10) == {"opensm-active": "pending"}
