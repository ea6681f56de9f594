"""Hosts that cannot be assessed come back unknown with a reason; a command is
retried only when it certainly never started."""

from __future__ import annotations

import asyncio
import socket

import pytest

from runbook.transport import HostKeyPolicy, session
from tests.transport.conftest import inventory, known_hosts


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_refused_connection_is_unknown_and_not_retried(server, make_transport, tmp_path):
    hosts = inventory(("n1", server))
    hosts["n1"].vars["ansible_port"] = _closed_port()
    t = make_transport(hosts, HostKeyPolicy([]))
    r = await t.run("n1", "echo hi", timeout=5)
    assert r.exit_status is None
    assert r.unknown_reason == "unreachable: connection refused"
    assert (r.started_remote, r.attempts) == (False, 1)


async def test_silent_server_hits_the_connect_timeout(make_transport, server, tmp_path):
    silent = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)  # accepts, never speaks
    try:
        hosts = inventory(("n1", server))
        hosts["n1"].vars["ansible_port"] = silent.sockets[0].getsockname()[1]
        t = make_transport(hosts, HostKeyPolicy([]), connect_timeout=0.3)
        r = await t.run("n1", "true", timeout=5)
        assert r.unknown_reason == "unreachable: connect timeout after 0.3s"
        assert (r.started_remote, r.attempts) == (False, 1)
    finally:
        silent.close()


async def test_auth_refused(server, make_transport, tmp_path, keys):
    other = tmp_path / "other_key"
    keys.stranger.write_private_key(str(other))
    t = make_transport(
        inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]), client_keys=[str(other)]
    )
    r = await t.run("n1", "true", timeout=5)
    assert r.unknown_reason.startswith("auth refused: root@127.0.0.1")
    assert server.stats.execs == []


async def test_timeout_is_unknown_closes_the_channel_and_keeps_a_healthy_connection(
    server, make_transport, tmp_path
):
    t = make_transport(inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]))
    r = await t.run("n1", "sleep 5", timeout=0.3)
    assert r.unknown_reason == "timeout after 0.3s"
    assert (r.exit_status, r.started_remote, r.attempts) == (None, True, 1)
    assert r.ended - r.started < 1.5
    await asyncio.sleep(0.1)
    assert server.stats.signals == ["KILL"]
    assert server.stats.channels_closed == 1  # the server-side channel is gone
    r = await t.run("n1", "echo after", timeout=5)
    assert r.stdout == "after\n"
    assert server.stats.connections == 1  # close was acknowledged: connection kept


async def test_timeout_on_a_hung_host_replaces_the_connection(server, make_transport, tmp_path, monkeypatch):
    monkeypatch.setattr(session, "PROBE_GRACE", 0.3)
    t = make_transport(inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]))
    r = await t.run("n1", "freeze", timeout=0.3)  # the server stops reading its socket
    assert r.unknown_reason == "timeout after 0.3s"
    r = await t.run("n1", "echo fresh", timeout=5)
    assert (r.exit_status, r.stdout) == (0, "fresh\n")
    assert server.stats.connections == 2  # the hung connection was not reused


async def test_handshake_dropped_before_start_is_retried_once(server, make_transport, tmp_path):
    server.drop_handshakes = 1  # as sshd does beyond MaxStartups
    t = make_transport(inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]))
    r = await t.run("n1", "echo once", timeout=5)
    assert (r.exit_status, r.stdout, r.attempts) == (0, "once\n", 2)
    assert server.stats.execs == ["echo once"]


async def test_handshake_dropped_twice_gives_up_after_the_retry(server, make_transport, tmp_path):
    server.drop_handshakes = 2
    t = make_transport(inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]))
    r = await t.run("n1", "echo never", timeout=5)
    assert r.unknown_reason == "unreachable: connection closed during handshake"
    assert (r.started_remote, r.attempts) == (False, 2)
    assert server.stats.execs == []


async def test_refused_channel_is_retried_once(server, make_transport, tmp_path):
    t = make_transport(inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]))
    assert (await t.run("n1", "true", timeout=5)).ok
    server.refuse_sessions = 1
    r = await t.run("n1", "echo second", timeout=5)
    assert (r.exit_status, r.stdout, r.attempts) == (0, "second\n", 2)
    server.refuse_sessions = 2
    r = await t.run("n1", "echo third", timeout=5)
    assert r.unknown_reason.startswith("channel open failed")
    assert (r.started_remote, r.attempts) == (False, 2)
    assert server.stats.execs == ["true", "echo second"]


async def test_connection_lost_mid_command_is_never_retried(server, make_transport, tmp_path):
    t = make_transport(inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]))
    r = await t.run("n1", "drop", timeout=5)
    assert r.unknown_reason == "connection lost mid-command"
    assert (r.exit_status, r.started_remote, r.attempts) == (None, True, 1)
    assert r.stdout == "partial\n"  # what arrived before the drop is kept
    assert server.stats.execs == ["drop"]  # ran once: it may have had effects
    r = await t.run("n1", "echo back", timeout=5)
    assert r.stdout == "back\n" and server.stats.connections == 2


async def test_unknown_host_name_is_a_key_error(server, make_transport, tmp_path):
    t = make_transport(inventory(("n1", server)), HostKeyPolicy([]))
    with pytest.raises(KeyError):
        await t.run("nope", "true", timeout=1)


async def test_bad_inventory_port_is_unknown_not_a_crash(server, make_transport):
    hosts = inventory(("n1", server))
    hosts["n1"].vars["ansible_port"] = "twenty-two"
    t = make_transport(hosts, HostKeyPolicy([]))
    r = await t.run("n1", "true", timeout=1)
    assert r.unknown_reason == "bad inventory: n1 has port 'twenty-two'"
