"""Gaps of issue 13 found on the last pass over its items, each judged on a
real output or on the simulator: the fleet-wide NCCL run's rank count (item
12) and ib-write-bw's wait for its server instead of a fixed sleep (item 11)."""

from __future__ import annotations

import re

from runbook.criteria.host import judge_host, parse_output
from runbook.sim.session import run_line
from tests.sim.conftest import design, machine_of  # noqa: F401  (the simulated nodes, no network)

from .helpers import fixture, runbook, seed_vars


def _nccl_reason(ranks: int) -> str:
    step = runbook().step("nccl-inter-node")
    out = fixture("nccl-tests/2node-16xRTX6000D")  # a real 16-rank run (2 nodes x 8 GPUs)
    record, problem = parse_output(step.verify.parse, out)
    v = dict(seed_vars("gpu01"), launch_ranks=ranks, launch_hosts=["gpu01", "gpu02"], launch_count=2)
    return judge_host(step.verify, 0, out, v, record, problem).reason


def test_nccl_inter_node_counts_the_ranks_of_its_launch():
    assert "rank_count: expected 384, found 16" in _nccl_reason(384)  # nodes or GPUs left out of the run
    assert "rank_count" not in _nccl_reason(16)


async def test_ib_write_bw_waits_for_its_server_instead_of_sleeping(machine_of):
    run = runbook().step("ib-write-bw").verify.run
    assert not re.search(r"&\s*\n\s*sleep \d", run)  # no fixed sleep between server and client
    assert "until numactl" in run and "localhost" in run  # the client is retried until it connects
    node = machine_of(2)("gpu01")
    # a client with no server listening is refused, as the real TCP connect is
    out, err, status = await run_line(node, "ib_write_bw -d mlx5_0 -F --report_gbits -D 5 localhost")
    assert status == 1 and "Couldn't connect to localhost:18515" in err
