"""The rulebook's table (run/rules.py, docs/architecture.md "Status rules"), one row each."""

from dataclasses import dataclass

from runbook.definition.model import Status
from runbook.run import rules


@dataclass
class D:
    kind: str
    expires: float | None = None
    operator: str = "alice"
    reason: str = "why"


def judge(raw, decisions=(), manual=False, at=100.0):
    return rules.judge(raw, "r", list(decisions), manual=manual, at=at).status


def test_apply_semantics():
    assert rules.apply_outcome("apply", True, True, "reboot", "") == (
        Status.PENDING,
        "applied; reboot owed; re-verify pending",
    )
    assert rules.apply_outcome("apply", True, True, None, "")[0] == Status.PENDING
    assert rules.apply_outcome("apply", False, True, None, "exit 1") == (Status.FAIL, "apply failed: exit 1")
    assert rules.apply_outcome("apply", False, False, None, "no route")[0] == Status.UNKNOWN
    assert rules.apply_outcome("rollback", True, True, None, "")[0] == Status.ROLLED_BACK
    assert rules.apply_outcome("rollback", False, True, None, "exit 1")[0] == Status.FAIL


def test_decisions():
    assert judge(None) == Status.PENDING
    assert judge(Status.RUNNING, [D("skip")]) == Status.RUNNING
    assert judge(Status.PASS, [D("skip")]) == Status.SKIPPED
    for raw in (Status.FAIL, Status.UNKNOWN, Status.BLOCKED, Status.INTERRUPTED):
        assert judge(raw, [D("waive")]) == Status.WAIVED
    assert judge(Status.PASS, [D("waive")]) == Status.PASS
    assert judge(Status.PENDING, [D("waive")]) == Status.PENDING
    # expiry: active while at < expires
    assert judge(Status.FAIL, [D("waive", expires=100.5)]) == Status.WAIVED
    assert judge(Status.FAIL, [D("waive", expires=100.0)]) == Status.FAIL
    # a note confirms a manual step that has no result, nothing else
    assert judge(None, [D("note")], manual=True) == Status.PASS
    assert judge(None, [D("note")], manual=False) == Status.PENDING
    assert judge(None, [D("approve"), D("decline")]) == Status.PENDING


def test_step_status_exit_code_and_stale():
    # no host targeted (a group the inventory declares empty): not applicable, and a
    # run's status counts such a step for nothing
    assert rules.step_status([]) == Status.NOT_APPLICABLE
    assert rules.run_status([Status.PASS, Status.NOT_APPLICABLE]) == Status.PASS
    assert rules.run_status([Status.FAIL, Status.NOT_APPLICABLE]) == Status.FAIL
    assert rules.run_status([Status.PENDING, Status.NOT_APPLICABLE]) == Status.PENDING
    assert rules.step_status([Status.PASS, Status.SKIPPED]) == Status.PASS
    assert rules.step_status([Status.SKIPPED, Status.WAIVED]) == Status.WAIVED
    assert rules.step_status([Status.PASS, Status.FAIL, Status.UNKNOWN]) == Status.FAIL
    assert rules.exit_code([Status.PASS, Status.WAIVED, Status.SKIPPED]) == 0
    assert rules.exit_code([Status.FAIL, Status.UNKNOWN]) == 1
    assert rules.exit_code([Status.PASS, Status.PENDING]) == 3
    a, b = "a" * 64, "b" * 64
    assert rules.stale_reason(Status.PASS, a, a, a, a) is None
    assert "definition changed" in rules.stale_reason(Status.PASS, a, a, b, a)
    assert "inventory changed" in rules.stale_reason(Status.FAIL, a, a, a, b)
    assert rules.stale_reason(Status.PASS, a, "", a, b) is None  # nothing recorded: no evidence
    assert rules.stale_reason(Status.PASS, a, a, None, a) == "the step is no longer in the runbook"
    assert rules.stale_reason(Status.PENDING, a, a, b, b) is None
