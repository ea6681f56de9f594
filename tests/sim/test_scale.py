"""Scale: a 200-node lab starts fast and serves a connection to every node at once."""

import asyncio
import time

from tests.sim.conftest import connect_node


async def test_200_nodes_start_fast_and_serve_concurrent_sessions(make_lab):
    start = time.monotonic()
    lab = await make_lab(200)
    assert time.monotonic() - start < 5.0
    assert lab.names()[0] == "gpu001" and lab.names()[199] == "gpu200" and len(lab.nodes) == 202
    addresses = {n.address for n in lab.nodes.values()}
    assert len(addresses) == 202 and all(a.startswith("127.") for a in addresses)

    async def one(name):
        async with connect_node(lab, name) as conn:
            return (await conn.run("hostname; cat /sys/class/infiniband/mlx5_0/ports/1/state")).stdout

    t = time.monotonic()
    outs = await asyncio.gather(*(one(n) for n in lab.names()))
    assert outs == [f"{n}\n4: ACTIVE\n" for n in lab.names()]
    assert time.monotonic() - t < 20.0
