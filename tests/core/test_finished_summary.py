"""The summary a run ends with (Session.execute's RunFinished) is what `runbook run`
prints (Session.finished_summary): judged once, for the steps and hosts that ran.
Hosts on a closed loopback port: nothing answers, every host is unknown."""

from __future__ import annotations

import socket
from pathlib import Path

from runbook.run.summary import run_summary
from runbook.workspace.project import load_project
from runbook.workspace.session import Session

REPO = Path(__file__).resolve().parents[2]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_the_run_prints_the_summary_it_finished_with(tmp_path):
    inv = tmp_path / "inv.yaml"
    port = _closed_port()
    inv.write_text(
        "all:\n  hosts:\n"
        + "".join(
            f"    n{i}:\n      ansible_host: 127.0.0.1\n      ansible_port: {port}\n      ansible_user: root\n"
            for i in (1, 2)
        )
    )
    project = load_project(REPO / "steps", inv, check=False)
    session = Session.open(project.runbook, project.inventory, tmp_path / "state", new=True)
    try:
        steps = session.steps(["ssh-reachable"])
        assert session.finished_summary(steps, None) is None  # nothing ran yet
        await session.execute(steps, "verify")
        doc = session.finished_summary(steps, None)
        assert doc is not None
        assert doc == run_summary(session.state, steps, project.inventory, None, with_exit_code=True)
        assert doc["status"] == session.state.finished["status"] == "unknown"
        assert doc["exit_code"] == 3 and set(doc["steps"][0]["hosts"]) == {"n1", "n2"}
        # another selection (another list of steps, other hosts) is judged anew
        assert session.finished_summary(list(steps), None) is None
        assert session.finished_summary(steps, ["n1"]) is None
        await session.execute(steps, "verify", hosts=["n1"])
        assert session.finished_summary(steps, None) is None
        assert session.finished_summary(steps, ["n1"])["steps"][0]["counts"] == {"unknown": 1}
    finally:
        await session.close()
