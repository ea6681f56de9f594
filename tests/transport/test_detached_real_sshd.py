"""A detached job on a real OpenSSH sshd (tests/sshd_server.py): it outlives the
SSH command that started it, a later command re-attaches and reads its result
without starting it again, and a stop ends its whole session. This machine has
no systemd as PID 1, so it is the setsid path (engine/detached.py)."""

from __future__ import annotations

import asyncio
import glob
import shutil
import uuid
from pathlib import Path

import pytest

from runbook.definition.model import Host
from runbook.engine.detached import JOB_ROOT, job_dir, stop_command, wrap
from runbook.transport import HostKeyPolicy, Transport
from tests.sshd_server import sshd_server  # noqa: F401  (fixture)

pytestmark = pytest.mark.sshd


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
    run_id = f"t{uuid.uuid4().hex[:12]}"  # this test's own job directories, removed after
    yield t, run_id
    await t.close()
    for d in glob.glob(f"{JOB_ROOT}/{run_id}.*"):
        shutil.rmtree(d, ignore_errors=True)


async def _dropped(t: Transport, command: str, after: float) -> None:
    """Start `command` and drop it after `after` seconds (the engineer's connection goes)."""
    task = asyncio.ensure_future(t.run("n1", command, timeout=60))
    await asyncio.sleep(after)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass


async def test_job_outlives_the_command_and_is_reattached_once(node, tmp_path):
    t, run_id = node
    starts = tmp_path / "starts"
    command = f"echo started >> {starts}; sleep 3; echo 'GPU 0: OK'; exit 3"
    await _dropped(t, wrap(command, run_id, "burn", "verify"), 1.5)
    d = Path(job_dir(run_id, "burn", "verify"))
    how = (d / "how").read_text().strip()
    assert how == ("systemd" if Path("/run/systemd/system").is_dir() else "setsid")
    r = await t.run("n1", f'kill -0 "$(cat {d}/pid)" && echo alive', timeout=10)
    assert r.stdout == "alive\n"  # the job did not die with its SSH command
    r = await t.run("n1", wrap(command, run_id, "burn", "verify", resume=True), timeout=60)
    assert (r.exit_status, r.stdout) == (3, "GPU 0: OK\n"), r.stderr
    assert "re-attached" in r.stderr and "ended with exit status 3" in r.stderr
    assert starts.read_text() == "started\n"  # started once


async def test_stop_ends_the_whole_job_session(node):
    t, run_id = node
    await _dropped(t, wrap("sleep 120 & sleep 120; wait", run_id, "burn", "verify"), 1.5)
    pid = int(Path(job_dir(run_id, "burn", "verify"), "pid").read_text())
    members = f"ps -o pid= -s {pid} | wc -l"
    assert int((await t.run("n1", members, timeout=10)).stdout) >= 2  # the job and its sleeps
    r = await t.run("n1", stop_command(run_id, "burn", "verify"), timeout=30)
    assert r.exit_status == 0 and r.stdout.startswith("stopped ("), (r.stdout, r.stderr)
    assert int((await t.run("n1", members, timeout=10)).stdout) == 0  # nothing of it is left
    r = await t.run("n1", stop_command(run_id, "burn", "verify"), timeout=30)
    assert r.stdout == "not running\n"
