"""`runbook sim --time-scale F` / Lab.start(time_scale=F): the modelled durations
of the long tests are multiplied by F (commands/base.py modelled_wait); at 0 a
long test answers at once, with the same output."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from runbook.sim.commands import base

from .conftest import next_base

DCGM = "dcgmi diag -r 4"  # the longest level: 1.5 modelled seconds
BURN = "cd /opt/gpu-burn && ./gpu_burn -tc 400"  # 400 s of burn: 100 modelled seconds


@pytest.fixture
def waits(monkeypatch):
    """The durations the simulator asked the event loop for (asyncio.sleep is
    one function: patched through base's import, it is patched everywhere)."""
    asked: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(seconds, *a, **kw):
        asked.append(seconds)
        return await real_sleep(seconds, *a, **kw)

    monkeypatch.setattr(base.asyncio, "sleep", sleep)
    return asked


async def test_a_lab_at_time_scale_0_runs_the_long_tests_at_once_with_the_same_output(make_lab, waits):
    slow = await make_lab(nodes=2, time_scale=1.0)
    fast = await make_lab(nodes=2, time_scale=0)
    assert fast.cluster.time_scale == 0 and slow.cluster.time_scale == 1.0
    dcgm_slow = await slow.node("gpu01").run(DCGM)
    assert waits == [1.5]
    waits.clear()
    dcgm_fast = await fast.node("gpu01").run(DCGM)
    assert waits == [0]
    assert dcgm_fast == dcgm_slow and dcgm_fast[2] == 0 and "Pass" in dcgm_fast[0]
    waits.clear()
    # 100 modelled seconds: at scale 1 it would outlast the guard many times over
    out, err, status = await asyncio.wait_for(fast.node("gpu01").run(BURN), 30)
    assert waits and set(waits) == {0}
    assert status == 0 and "Burning for 400 seconds." in out and "FAULTY" not in out
    assert "100.0%  proc'd: 59200" in out and out.endswith("".join(f"\tGPU {i}: OK\n" for i in range(8)))


async def test_the_pair_and_job_tests_scale_too(make_lab, waits):
    lab = await make_lab(nodes=2, time_scale=0)
    out, _, status = await lab.node("gpu01").run(
        "mpirun -H gpu01:8,gpu02:8 all_reduce_perf -b 1G -e 1G -g 1 | grep -c 'Avg bus bandwidth'"
    )
    assert (out, status) == ("1\n", 0)
    assert waits == [0.0]  # the job's own 0.05 s, scaled (perf.py _ranks_run)
    lab2 = await make_lab(nodes=2, time_scale=2)
    waits.clear()
    out2, _, _ = await lab2.node("gpu01").run("all_reduce_perf -b 8 -e 8 -g 8 | grep -c 'Avg bus bandwidth'")
    assert out2 == "1\n" and waits == [0.1]


@pytest.mark.parametrize("value", ["-1", "1001", "nan", "x"])
def test_a_bad_time_scale_is_refused_with_exit_2(tmp_path, value):
    p = subprocess.run(
        [sys.executable, "-m", "runbook", "sim", "--time-scale", value, "--dir", str(tmp_path / "lab")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "argument --time-scale" in p.stderr.strip().splitlines()[-1]
    assert not (tmp_path / "lab").exists()


async def test_lab_start_refuses_a_bad_time_scale(tmp_path):
    from runbook.sim.lab import Lab

    with pytest.raises(ValueError, match="--time-scale"):
        await Lab.start(tmp_path / "lab", nodes=1, base_address=next_base(), time_scale=-0.5)


POLL = 0.02  # the test's own wait for the server to listen


async def test_an_ib_write_bw_pair_at_time_scale_0_measures_the_same(make_lab, waits):
    async def pair(lab):
        client, server_node = lab.node("gpu01"), lab.node("gpu02")
        server = asyncio.ensure_future(server_node.run("ib_write_bw -d mlx5_0 --report_gbits"))
        for _ in range(100):  # until the server listens (its banner is printed first)
            await asyncio.sleep(POLL)
            out, _, status = await client.run("ib_write_bw -d mlx5_0 --report_gbits gpu02")
            if status == 0:
                break
        served = await server
        return out, served

    slow = await make_lab(nodes=2, time_scale=1.0)
    fast = await make_lab(nodes=2, time_scale=0)
    waits.clear()
    fast_out, fast_served = await pair(fast)
    assert {w for w in waits if w != POLL} == {0.0}  # the client's modelled 0.05 s, scaled to 0
    waits.clear()
    slow_out, slow_served = await pair(slow)
    assert {w for w in waits if w != POLL} == {0.05}
    assert "BW average[Gb/sec]" in fast_out
    assert fast_out.splitlines()[-2] == slow_out.splitlines()[-2]  # the measured line
    assert fast_served[2] == slow_served[2] == 0
