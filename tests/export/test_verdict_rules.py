"""The log's verdicts follow the same rules as runbook.run.state.RunState, so the
signed report never says something other than `runbook status`."""
from runbook.run.events import HostFinished, OperatorDecision
from runbook.export.verdicts import final_verdicts, step_statuses
from runbook.definition.model import Status
from runbook.run.state import RunState


def result(step, host, status, t):
    return {"step_id": step, "action": "verify", "host": host, "status": status, "reason": "", "ended": t}


def decision(kind, step, hosts, t):
    return {"kind": kind, "step_id": step, "hosts": hosts, "operator": "alice", "reason": "why", "time": t,
            "expires": None}


def test_same_rules_as_run_state():
    results = [result("ofed", "gpu01", "pass", 1), result("ofed", "gpu02", "fail", 2),
               result("ofed", "gpu03", "fail", 3), result("ofed", "gpu04", "unknown", 4)]
    decisions = [decision("waive", "ofed", "gpu[01-02]", 5), decision("skip", "ofed", "gpu03", 6),
                 decision("note", "ofed", "", 7), decision("note", "walkthrough", "", 8)]
    log = final_verdicts(results, decisions, at=10, manual=frozenset({"walkthrough"}))

    state = RunState(manual_steps={"walkthrough"})
    for r in results:
        state.apply(HostFinished(r["step_id"], "verify", r["host"], r["status"], "", ended=r["ended"]))
    for d in decisions:
        state.apply(OperatorDecision(d["kind"], d["step_id"], d["hosts"], "alice", "why", time=d["time"]))
    for host in ("gpu01", "gpu02", "gpu03", "gpu04"):
        assert log["ofed"][host]["status"] == state.status("ofed", host, now=10).value, host
    assert log["ofed"]["gpu01"]["status"] == "pass"      # a waiver over a pass changes nothing
    assert log["ofed"]["gpu02"]["status"] == "waived"
    assert log["ofed"]["gpu03"]["status"] == "skipped"
    assert log["ofed"]["gpu04"]["status"] == "unknown"   # a note on a step that is not manual decides nothing
    # a note confirms a manual step (no host results: the whole step)
    assert step_statuses(["walkthrough", "ofed"], log, decisions, 10, frozenset({"walkthrough"})) == \
        {"walkthrough": "pass", "ofed": "unknown"}
    assert state.status("walkthrough", "gpu01", now=10) == Status.PASS
