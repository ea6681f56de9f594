"""One connection per host, reused; concurrent first uses share one connect;
handshakes bounded; a dropped connection is reopened on next use."""

from __future__ import annotations

import asyncio

from runbook.transport import HostKeyPolicy
from tests.transport.conftest import inventory, known_hosts
from tests.transport.loopback_ssh import LoopbackServer


async def test_one_connection_reused_across_many_commands(server, make_transport, tmp_path):
    t = make_transport(inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]))
    for i in range(30):
        r = await t.run("n1", f"echo {i}", timeout=5)
        assert (r.exit_status, r.stdout, r.unknown_reason) == (0, f"{i}\n", None)
    results = await asyncio.gather(*(t.run("n1", f"echo c{i}", timeout=5) for i in range(20)))
    assert [r.stdout for r in results] == [f"c{i}\n" for i in range(20)]
    assert server.stats.connections == 1
    assert len(server.stats.execs) == 50
    assert t.connected() == {"n1"}


async def test_concurrent_first_uses_share_one_connect(server, make_transport, tmp_path):
    server.handshake_delay = 0.1  # the first uses all arrive while the handshake is in flight
    t = make_transport(inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]))
    results = await asyncio.gather(*(t.run("n1", "true", timeout=5) for _ in range(25)))
    assert all(r.exit_status == 0 and r.attempts == 1 for r in results)
    assert server.stats.connections == 1


async def _max_concurrent_handshakes(server, make_transport, tmp_path, bound: int) -> int:
    server.handshake_delay = 0.1  # each handshake holds its slot a while
    hosts = inventory(*((f"n{i:02d}", server) for i in range(24)))
    t = make_transport(hosts, HostKeyPolicy([known_hosts(tmp_path, server)]), max_handshakes=bound)
    results = await asyncio.gather(*(t.run(h, "true", timeout=5) for h in hosts))
    assert all(r.ok for r in results)
    assert server.stats.connections == 24  # one per inventory host
    return server.stats.max_handshaking


async def test_handshakes_never_exceed_the_bound(server, make_transport, tmp_path):
    assert await _max_concurrent_handshakes(server, make_transport, tmp_path, bound=4) == 4


async def test_handshake_instrument_sees_more_when_unbounded(server, make_transport, tmp_path):
    # Proves the counter above can exceed the bound: without it the server sees them all at once.
    assert await _max_concurrent_handshakes(server, make_transport, tmp_path, bound=64) > 4


async def test_dropped_connection_is_reopened_on_next_use(server, make_transport, tmp_path):
    t = make_transport(inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]))
    assert (await t.run("n1", "echo a", timeout=5)).ok
    for conn in list(server.conns):  # the server side goes away between two steps
        conn.abort()
    await asyncio.sleep(0.05)
    assert t.connected() == set()
    r = await t.run("n1", "echo b", timeout=5)
    assert (r.exit_status, r.stdout, r.attempts) == (0, "b\n", 1)
    assert server.stats.connections == 2


async def test_close_closes_every_connection(keys, make_transport, tmp_path):
    servers = [await LoopbackServer(keys.host, keys.client).start() for _ in range(3)]
    try:
        hosts = inventory(*((f"n{i}", s) for i, s in enumerate(servers)))
        t = make_transport(hosts, HostKeyPolicy([known_hosts(tmp_path, *servers)]))
        await asyncio.gather(*(t.run(h, "true", timeout=5) for h in hosts))
        assert t.connected() == set(hosts)
        await t.close()
        assert t.connected() == set()
        await asyncio.sleep(0.05)
        assert all(not s.conns for s in servers)
    finally:
        for s in servers:
            await s.stop()
