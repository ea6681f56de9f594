"""Detached jobs on a simulated node (runbook/engine/detached.py): a systemd
transient unit where systemd is PID 1, `setsid` where it is not (the scenario's
`no_systemd`), re-attach by unit or pid, progress lines while it runs, and a
stop that leaves no job process behind."""

from __future__ import annotations

import asyncio

import pytest

from runbook.engine.detached import stop_command, unit_name, wrap

BURN = "cd /opt/gpu-burn && ./gpu_burn 8"  # 2 s in the simulator (4 nominal seconds per second)


def test_unit_names_are_sanitized():
    assert unit_name("r1", "gpu-burn-in", "verify") == "runbook-r1-gpu-burn-in"
    assert unit_name("20261201T0019Z", "dcgm diag;rm", "apply") == "runbook-20261201T0019Z-dcgm_diag_rm-apply"
    assert len(unit_name("r" * 300, "s", "verify")) <= 200


@pytest.mark.parametrize("systemd", [True, False])
async def test_job_starts_the_right_way_and_is_reattached(machine_of, sh, systemd):
    m = machine_of(1, None if systemd else {"gpu01": ["no_systemd"]})("gpu01")
    session = asyncio.ensure_future(sh(m, wrap(BURN, "r1", "gpu-burn-in", "verify")))
    await asyncio.sleep(1.2)
    session.cancel()  # the connection drops
    how = (await sh(m, "cat /var/tmp/runbook-jobs/r1.gpu-burn-in.verify/how"))[0]
    assert how == ("systemd\n" if systemd else "setsid\n")
    show = (await sh(m, "systemctl show -p ActiveState,Result,ExecMainStatus runbook-r1-gpu-burn-in"))[0]
    if systemd:
        assert show == "Result=success\nExecMainStatus=0\nActiveState=active\n"
    else:
        assert "ActiveState=inactive" in show  # no unit: the pid is what re-attach finds
        assert (await sh(m, "command -v systemd-run"))[2] == 1
    assert len(m.detached) == 1 and m.state.platform.burn_runs == 1
    out, err, status = await sh(m, wrap(BURN, "r1", "gpu-burn-in", "verify", resume=True))
    assert status == 0 and "re-attached" in err and "Tested 8 GPUs:" in out
    assert "ended with exit status 0" in err
    assert m.state.platform.burn_runs == 1 and not m.detached and not m.units


async def test_progress_lines_while_the_job_runs(machine_of, sh):
    m = machine_of(1)("gpu01")
    # the job writes its progress straight into its output file (no pipe, no redirection)
    out, err, status = await sh(m, wrap(BURN, "r2", "gpu-burn-in", "verify"))
    assert status == 0
    progress = [line for line in err.splitlines() if line.startswith("runbook: progress: ")]
    assert progress, err
    # stdout stays the job's own output: the step is judged on it
    assert out == (await sh(m, "cat /var/tmp/runbook-jobs/r2.gpu-burn-in.verify/out"))[0]


@pytest.mark.parametrize("systemd", [True, False])
async def test_stop_ends_the_job_and_leaves_no_process(machine_of, sh, systemd):
    m = machine_of(1, None if systemd else {"gpu01": ["no_systemd"]})("gpu01")
    session = asyncio.ensure_future(sh(m, wrap("sleep 600", "r3", "gpu-burn-in", "verify")))
    await asyncio.sleep(1.2)
    assert len(m.detached) == 1
    out, _, status = await sh(m, stop_command("r3", "gpu-burn-in", "verify"))
    assert status == 0 and out.startswith("stopped (" + ("systemd" if systemd else "setsid"))
    assert not m.detached and not m.units  # no job process left on the node
    out, err, status = await asyncio.wait_for(session, 10)  # the waiting wrapper notices
    assert status == 125 and "stopped by the operator" in err
    assert (await sh(m, stop_command("r3", "gpu-burn-in", "verify")))[0] == "not running\n"
