"""RDMA bandwidth depends on where the benchmark runs: ib_write_bw with its
CPUs and buffers on the other socket than the NIC sends every transfer across
the CPU interconnect and is slower; bound to the NIC's own node it is full
(runbook/sim/perfmodel.py). The ib-write-bw step binds to the node the kernel
reports for each NIC, so it measures the adapter and not the placement.
Inside one node NCCL never touches a NIC: a NIC on the wrong node does not
slow single-node all_reduce, only the runs across nodes."""

from __future__ import annotations

import asyncio
import re

from runbook.definition.template import render_command
from runbook.sim import perfmodel
from runbook.sim.session import run_line
from tests.sim.conftest import design, machine_of  # noqa: F401  (the simulated nodes, no network)

from .helpers import judge, runbook, seed_vars

BIND = "--cpunodebind=$n --membind=$n"


def _bw(out: str) -> float:
    # the result row of a perftest report: #bytes #iterations peak average msgrate
    row = re.search(r"^\s*65536\s+\d+\s+([\d.]+)\s+([\d.]+)", out, re.M)
    assert row, out
    return float(row.group(2))


async def _pair(node, dev: str, bind: str) -> float:
    cmd = (
        f"{bind} ib_write_bw -d {dev} -F --report_gbits -D 5 > /dev/null 2>&1 & "
        f"sleep 0.2; {bind} ib_write_bw -d {dev} -F --report_gbits -D 5 localhost; wait"
    )
    out, err, status = await run_line(node, cmd)
    assert status == 0, err
    return _bw(out)


async def test_a_run_off_the_nics_node_is_slower(machine_of):
    node = machine_of(2)("gpu01")
    local = await _pair(node, "mlx5_0", "numactl --cpunodebind=0 --membind=0")  # mlx5_0 sits on node 0
    remote = await _pair(node, "mlx5_0", "numactl --cpunodebind=1 --membind=1")
    memory_only = await _pair(node, "mlx5_0", "numactl --cpunodebind=0 --membind=1")
    assert local > 190
    assert remote < 0.85 * local and remote == memory_only
    assert abs(remote - local * perfmodel.CROSS_SOCKET) < 1.0
    # one end off the node is enough: the server's buffers cross the interconnect too
    one_end = (
        "numactl -N 1 -m 1 ib_write_bw -d mlx5_0 -F --report_gbits -D 5 > /dev/null 2>&1 & sleep 0.2; "
        "numactl -N 0 -m 0 ib_write_bw -d mlx5_0 -F --report_gbits -D 5 localhost; wait"
    )
    assert _bw((await run_line(node, one_end))[0]) < 0.85 * local


async def test_the_step_binds_each_nic_to_its_own_node_and_passes(machine_of):
    step = runbook().step("ib-write-bw")
    assert step.verify.run.count(BIND) == 2  # server and client
    assert "n=$(cat /sys/class/infiniband/$d/device/numa_node)" in step.verify.run
    healthy = machine_of(2)("gpu01")
    command = render_command(step.verify.run, seed_vars("gpu01"))
    out, _, _ = await run_line(healthy, command)
    assert judge("ib-write-bw", {"gpu01": out})["gpu01"].status.value == "pass"
    # the same loop bound to the other socket: the rails of both sockets fall below the design
    wrong = command.replace(BIND, "--cpunodebind=$((1-n)) --membind=$((1-n))")
    out, _, _ = await run_line(healthy, wrong)
    verdict = judge("ib-write-bw", {"gpu01": out})["gpu01"]
    assert verdict.status.value == "fail"
    assert all(dev in verdict.reason for dev in ("mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3")), verdict.reason


async def test_the_binding_follows_the_measured_node(machine_of):
    # mlx5_2 sits on node 0 (nic_numa_mismatch): nic-numa-affinity reports the slot; the
    # bandwidth test binds where the kernel says the NIC is, and measures the adapter at full rate
    node = machine_of(2, {"gpu01": ["nic_numa_mismatch"]})("gpu01")
    step = runbook().step("ib-write-bw")
    out, _, _ = await run_line(node, render_command(step.verify.run, seed_vars("gpu01")))
    assert judge("ib-write-bw", {"gpu01": out})["gpu01"].status.value == "pass"
    assert await _pair(node, "mlx5_2", "numactl -N 1 -m 1") < 170  # the design's node is now the far one


def test_a_nic_on_the_wrong_node_does_not_slow_single_node_nccl(machine_of):
    cluster_node = machine_of(2, {"gpu01": ["nic_numa_mismatch"]})("gpu01").state
    healthy = machine_of(2)("gpu01").state
    assert perfmodel.intra_factor(cluster_node) == perfmodel.intra_factor(healthy) == 1.0


async def test_a_server_a_killed_run_left_behind_is_ended_first(machine_of):
    # A run killed mid-step leaves its ib_write_bw server waiting for a client (for
    # ever on a real node; here up to the sim's 120 s) on the port every server uses.
    # The next run's first client would pair with it: wherever and however it was
    # started (here off the NIC's node, so that pairing measures low), and the next
    # run's own server, unable to listen, would never have its client. The step
    # ends such a server first (fuser -k), then measures each NIC with its own.
    node = machine_of(2)("gpu01")
    left = asyncio.ensure_future(
        run_line(node, "numactl -N 1 -m 1 ib_write_bw -d mlx5_0 -F --report_gbits -D 5 > /dev/null")
    )
    await asyncio.sleep(0.05)  # it listens
    assert not left.done()
    command = render_command(runbook().step("ib-write-bw").verify.run, seed_vars("gpu01"))
    out, _, _ = await run_line(node, command)
    assert (await left)[2] == 137  # killed, as psmisc fuser -k does
    assert judge("ib-write-bw", {"gpu01": out})["gpu01"].status.value == "pass"
