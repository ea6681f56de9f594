"""The reason an approval records (runbook/engine/approval.py)."""

from runbook.engine.approval import approval_reason


def test_one_command_for_every_host_is_said_once():
    reason = approval_reason("apply", {"gpu01": "mlxconfig -d mlx5_0", "gpu02": "mlxconfig -d mlx5_0"})
    assert reason == "apply confirmed: mlxconfig -d mlx5_0"


def test_different_commands_are_folded_by_nodeset():
    reason = approval_reason(
        "rollback", {"gpu01": "echo a", "gpu02": "echo b", "gpu03": "echo a", "gpu04": "echo a"}
    )
    assert reason == "rollback confirmed:\non gpu[01,03-04]: echo a\non gpu02: echo b"
    assert reason.split(" ", 1)[0] == "rollback"  # what the completion log reads
