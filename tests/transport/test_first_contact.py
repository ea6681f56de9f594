"""Transport.first_contact: set once the first host answered TCP (before its key
exchange), or when a connect ahead ended without any TCP; a caller that prepares
meanwhile (workspace/connecting.py) waits on it and never hangs."""

from __future__ import annotations

import asyncio
import socket

from runbook.transport import HostKeyPolicy
from tests.transport.conftest import inventory, known_hosts


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_set_by_the_first_contact_and_the_command_takes_the_connect_over(
    server, make_transport, tmp_path
):
    t = make_transport(inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]))
    assert not t.first_contact.is_set()
    t.connect_ahead(["n1"])
    await asyncio.wait_for(t.first_contact.wait(), 10)
    r = await t.run("n1", "echo hi", timeout=10)  # the command takes over the connect ahead
    assert (r.exit_status, r.stdout, r.attempts) == (0, "hi\n", 1)
    assert t.connected() == {"n1"}


async def test_set_when_the_only_host_refuses(server, make_transport):
    hosts = inventory(("n1", server))
    hosts["n1"].vars["ansible_port"] = _closed_port()
    t = make_transport(hosts, HostKeyPolicy([]))
    t.connect_ahead(["n1"])
    await asyncio.wait_for(t.first_contact.wait(), 10)
    r = await t.run("n1", "true", timeout=5)
    assert r.unknown_reason == "unreachable: connection refused"


async def test_set_when_the_host_cannot_even_be_resolved_to_a_target(server, make_transport):
    hosts = inventory(("n1", server))
    hosts["n1"].vars["ansible_port"] = "not-a-port"
    t = make_transport(hosts, HostKeyPolicy([]))
    t.connect_ahead(["n1"])
    await asyncio.wait_for(t.first_contact.wait(), 10)
    r = await t.run("n1", "true", timeout=5)
    assert r.exit_status is None and r.unknown_reason


async def test_connect_ahead_starts_a_chunk_then_the_rest_after_the_first_contact(
    server, make_transport, tmp_path
):
    names = [f"n{i}" for i in range(7)]
    hosts = inventory(*[(n, server) for n in names])
    t = make_transport(hosts, HostKeyPolicy([known_hosts(tmp_path, server)]), max_handshakes=3)
    t.connect_ahead(names + ["not-in-inventory"])
    assert sorted(t._ahead) == names[:3]  # one slot each; the rest wait for the first contact
    await asyncio.wait_for(t.first_contact.wait(), 10)
    # a command on a host the chunks have not reached yet connects it itself...
    first = await t.run("n6", "echo hi", timeout=10)
    results = await asyncio.gather(*(t.run(n, "echo hi", timeout=10) for n in names))
    assert first.exit_status == 0 and all(r.exit_status == 0 and r.attempts == 1 for r in results)
    # ...and every host was connected to once
    assert t.connected() == set(names) and server.stats.connections == len(names)


async def test_close_stops_the_chunks_not_started(server, make_transport, tmp_path):
    names = [f"n{i}" for i in range(6)]
    hosts = inventory(*[(n, server) for n in names])
    t = make_transport(hosts, HostKeyPolicy([known_hosts(tmp_path, server)]), max_handshakes=2)
    t.connect_ahead(names)
    await t.close()
    await asyncio.sleep(0.2)
    assert len(t._ahead) == 0 and server.stats.connections <= 2
