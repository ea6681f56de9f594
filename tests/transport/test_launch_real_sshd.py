"""A `launch:` job's commands (engine/kinds/launchjob.py) over a real OpenSSH sshd
(tests/sshd_server.py): a job whose SSH command is dropped (the tool killed) or
timed out keeps running in its own process group, and the stop command sent
later over SSH ends the whole group and says so."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from runbook.definition.model import Host
from runbook.engine.kinds import launchjob
from runbook.transport import HostKeyPolicy, Transport
from tests.kinds.test_launch_job_commands import group_alive, wait_for
from tests.sshd_server import sshd_server  # noqa: F401  (fixture)

pytestmark = pytest.mark.sshd
HOSTS = ["gpu01", "gpu02"]


@pytest.fixture
async def node(sshd_server):
    t = Transport(
        {
            "n1": Host(
                "n1",
                {
                    "ansible_host": sshd_server.addr,
                    "ansible_port": sshd_server.port,
                    "ansible_user": sshd_server.user,
                    "ansible_ssh_private_key_file": str(sshd_server.client_key),
                },
            )
        },
        policy=HostKeyPolicy([sshd_server.known_hosts]),
        ssh_config=[],
        connect_timeout=5,
    )
    yield t
    await t.close()


@pytest.mark.parametrize("how", ["dropped", "timeout"])
async def test_a_job_cut_short_over_ssh_is_found_and_ended(node, tmp_path, monkeypatch, how):
    monkeypatch.setattr(launchjob, "STOP_GRACE_SECONDS", 2)
    t = node
    root = str(tmp_path / "jobs")
    d = launchjob.job_dir("r1", "nccl-inter-node", HOSTS, root)
    job = launchjob.wrap("sleep 120 & sleep 120; wait", d, HOSTS)
    if how == "dropped":
        task = asyncio.ensure_future(t.run("n1", job, timeout=60))
        pgid = int(await asyncio.to_thread(wait_for, Path(d) / "pid"))
        task.cancel()  # the tool goes: its channel is closed
        try:
            await task
        except asyncio.CancelledError:
            pass
    else:
        r = await t.run("n1", job, timeout=2)
        assert r.unknown_reason == "timeout after 2s" and r.started_remote
        pgid = int((Path(d) / "pid").read_text())
    try:
        await asyncio.sleep(0.5)
        assert group_alive(pgid), "the job should outlive its SSH command"
        r = await t.run("n1", launchjob.stop_step_command("r1", "nccl-inter-node", root), timeout=30)
        assert r.exit_status == 0, r.stderr
        assert launchjob.ended(r.stdout) == [
            f"{launchjob.ENDED} in {d} (process group {pgid}, hosts gpu01 gpu02)"
        ]
        assert not group_alive(pgid)
        assert not Path(d).exists()
    finally:
        if group_alive(pgid):  # only the group this test started, by its id
            os.killpg(pgid, signal.SIGKILL)
