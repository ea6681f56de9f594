"""What a `launch:` job needs from a simulated node (engine/kinds/launchjob.py):
`long_job` makes an mpirun launched from the node last; while it runs the
launcher holds the job's session (setsid -w) and each other node of the job its
daemon, each a process of that node's table; `kill` of the process group ends
all of them, and the waiting setsid reports 128+SIGTERM; `rm -r` removes a
job's directory."""

from __future__ import annotations

import asyncio
import time

import pytest

from runbook.engine.kinds import launchjob
from runbook.errors import InputError

MPIRUN = "mpirun -H gpu01:8,gpu02:8 /opt/nccl-tests/build/all_reduce_perf -b 1G -e 1G -g 1"


async def test_long_job_makes_mpirun_last_and_shows_its_processes(machine_of, sh):
    get = machine_of(2, {"gpu01": [{"long_job": 1.5}]})
    launcher, other = get("gpu01"), get("gpu02")
    began = time.monotonic()
    job = asyncio.ensure_future(sh(launcher, MPIRUN))
    await asyncio.sleep(0.5)
    assert not launcher.detached and len(other.detached) == 1  # the daemon on the other node
    out, err, status = await job
    assert status == 0 and "# Avg bus bandwidth" in out, err
    assert time.monotonic() - began >= 1.5
    assert not other.detached
    # without the fault the same job is over at once
    get2 = machine_of(2)
    began = time.monotonic()
    out, _, status = await sh(get2("gpu01"), MPIRUN)
    assert status == 0 and time.monotonic() - began < 1.0


def test_long_job_takes_seconds_only(machine_of):
    with pytest.raises(
        InputError, match=r"scenario.yaml:3: long_job on gpu01: long_job takes a number of seconds"
    ):
        machine_of(2, {"gpu01": [{"long_job": "forever"}]})
    assert machine_of(2, {"gpu01": ["long_job"]})("gpu01").state.job_seconds == 30.0


async def test_setsid_wait_gives_the_output_and_status(machine_of, sh):
    m = machine_of(1)("gpu01")
    out, err, status = await sh(m, "setsid -w sh -c 'echo $$; echo warn >&2; exit 4'")
    assert status == 4 and err == "warn\n"
    assert int(out) >= 31000 and not m.detached


async def test_a_launch_job_outlives_its_session_until_its_group_is_killed(machine_of, sh):
    get = machine_of(2, {"gpu01": [{"long_job": 60}]})
    launcher, other = get("gpu01"), get("gpu02")
    d = launchjob.job_dir("r1", "nccl-inter-node", ["gpu01", "gpu02"])
    session = asyncio.ensure_future(sh(launcher, launchjob.wrap(MPIRUN, d, ["gpu01", "gpu02"])))
    await asyncio.sleep(0.3)
    session.cancel()  # the tool is killed: its SSH session goes
    await asyncio.sleep(0.3)
    [pid] = launcher.detached
    assert len(other.detached) == 1
    assert (await sh(launcher, f"cat {d}/pid"))[0] == f"{pid}\n"
    out, err, status = await sh(launcher, launchjob.stop_step_command("r1", "nccl-inter-node"))
    assert launchjob.ended(out) == [f"{launchjob.ENDED} in {d} (process group {pid}, hosts gpu01 gpu02)"], (
        out,
        err,
    )
    assert not launcher.detached and not other.detached
    assert (await sh(launcher, f"ls {d}"))[2] != 0  # its directory is gone (rm -rf)
    out, _, _ = await sh(launcher, launchjob.stop_step_command("r1", "nccl-inter-node"))
    assert out.strip() == launchjob.NONE_LEFT


async def test_a_daemon_killed_on_its_node_aborts_the_job(machine_of, sh):
    get = machine_of(2, {"gpu01": [{"long_job": 60}]})
    launcher, other = get("gpu01"), get("gpu02")
    job = asyncio.ensure_future(sh(launcher, f"setsid -w {MPIRUN}"))
    await asyncio.sleep(0.3)
    [daemon] = other.detached
    await sh(other, f"kill {daemon}")
    out, err, status = await asyncio.wait_for(job, 5)
    assert status == 143 and not launcher.detached and not other.detached


async def test_rm_r_removes_what_was_made_under_a_directory(machine_of, sh):
    m = machine_of(1)("gpu01")
    _, err, status = await sh(m, "mkdir -p /var/tmp/x/y && echo 1 > /var/tmp/x/y/f && rm -rf /var/tmp/x")
    assert status == 0, err
    assert (await sh(m, "ls /var/tmp/x"))[2] != 0
    _, err, status = await sh(m, "mkdir -p /var/tmp/z && rm /var/tmp/z")
    assert status == 1 and "Is a directory" in err  # without -r, as rm says
    _, err, status = await sh(m, "rm -rf /proc")
    assert status == 1
