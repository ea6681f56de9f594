"""Flows between leaves share the leaves' uplinks (sim/leafflows.py, pathmodel.py):
ib_write_bw across rails at full rate while the flows running fit in the
uplinks, each its share once they ask more than the uplinks carry, and full
rate again once the others have ended. In-process nodes, real commands."""

from __future__ import annotations

import asyncio
import re

from runbook.sim.leafflows import LeafFlows

CAPACITY = {"leafA": 400.0, "leafB": 800.0}


def test_a_flow_gets_its_share_only_when_the_uplinks_are_full():
    flows = LeafFlows()
    cap = CAPACITY.__getitem__
    assert flows.start("leafA", "leafA", 200, cap) == 200  # inside one leaf: no uplink
    assert flows.start("leafA", "leafB", 200, cap) == 200
    assert flows.start("leafA", "leafB", 200, cap) == 200  # 400 asked of leafA's 400
    assert flows.start("leafA", "leafB", 200, cap) == 400 / 600 * 200  # up out of leafA is full
    flows.end("leafA", "leafB", 200)
    flows.end("leafA", "leafB", 200)
    assert flows.start("leafB", "leafA", 200, cap) == 200  # leafA's way down is free
    assert flows.start("leafA", "leafB", 200, cap) == 200


def _gbps(out: str) -> float:
    # perftest's result line: bytes, iterations, peak, average, msg rate (ib_write_bw --report_gbits)
    line = [x for x in out.splitlines() if re.match(r"\s*65536\s", x)][-1]
    return float(line.split()[3])


async def test_flows_across_leaves_share_the_uplinks(machine_of, sh):
    get = machine_of(40)
    nodes = [get(f"gpu{i:02d}") for i in range(1, 41)]
    cluster = nodes[0].cluster
    cluster.time_scale = 2.0  # every client's modelled time overlaps the others'
    up = cluster.fabric.uplinks_per_spine() * len(cluster.fabric.spines)  # leaf01's uplinks
    rate = 400.0  # the seed's leaf_uplinks.rate_gbps
    # rail 1 (leaf01) -> rail 2 (leaf02): node i's mlx5_0 writes to node i+1's mlx5_1
    many = len(nodes)
    servers = [asyncio.ensure_future(sh(n, "ib_write_bw -d mlx5_1 -s 65536 --report_gbits")) for n in nodes]
    await asyncio.sleep(0.05)
    clients = [
        sh(nodes[i], f"ib_write_bw -d mlx5_0 -s 65536 --report_gbits {nodes[(i + 1) % many].name}")
        for i in range(many)
    ]
    results = await asyncio.gather(*clients)
    await asyncio.gather(*servers)
    assert all(code == 0 for _, _, code in results)
    got = [_gbps(out) for out, _, _ in results]
    line_rate = max(got)
    fit = int(up * rate // line_rate)  # the flows the uplinks carry at line rate
    if many <= fit:
        raise AssertionError(f"the test needs more flows ({many}) than leaf01's uplinks carry ({fit})")
    assert sorted(got, reverse=True)[:fit] == [line_rate] * fit  # the first ones: line rate
    assert min(got) < line_rate * 0.95  # the last ones: their share
    # all ended: a new flow has the uplinks to itself again
    server = asyncio.ensure_future(sh(nodes[1], "ib_write_bw -d mlx5_1 -s 65536 --report_gbits"))
    await asyncio.sleep(0.05)
    out, _, code = await sh(nodes[0], f"ib_write_bw -d mlx5_0 -s 65536 --report_gbits {nodes[1].name}")
    await server
    assert code == 0 and _gbps(out) == line_rate
