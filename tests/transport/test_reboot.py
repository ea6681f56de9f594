"""reboot: a dropped connection is success; wait_back reconnects until the host answers."""

from __future__ import annotations

import socket
import time

from runbook.transport import HostKeyPolicy
from tests.transport.conftest import inventory, known_hosts


async def test_reboot_dropping_the_connection_is_success(server, make_transport, tmp_path):
    t = make_transport(inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]))
    assert (await t.run("n1", "true", timeout=5)).ok
    r = await t.reboot("n1")
    assert (r.unknown_reason, r.exit_status, r.started_remote) == (None, None, True)
    assert "connection dropped by the reboot" in r.stderr
    assert t.connected() == set()
    assert server.stats.execs == ["true", "reboot"]


async def test_wait_back_reconnects_once_the_node_is_up(server, make_transport, tmp_path):
    server.down_after_reboot = 0.5  # stops listening for 0.5 s, like a rebooting node
    t = make_transport(inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]))
    assert (await t.reboot("n1")).unknown_reason is None
    t0 = time.monotonic()
    assert await t.wait_back("n1", timeout=5, interval=0.1) is True
    assert time.monotonic() - t0 >= 0.3
    assert server.stats.connections == 2 and server.stats.execs[-1] == "true"
    assert t.connected() == {"n1"}  # the new connection is pooled for the next step


async def test_wait_back_gives_up_at_the_deadline(server, make_transport, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    hosts = inventory(("n1", server))
    hosts["n1"].vars["ansible_port"] = port
    t = make_transport(hosts, HostKeyPolicy([]))
    t0 = time.monotonic()
    assert await t.wait_back("n1", timeout=0.5, interval=0.1) is False
    assert 0.4 <= time.monotonic() - t0 < 2
    assert t.last_failure["n1"] == "unreachable: connection refused"


async def test_wait_back_stops_at_once_on_a_refused_host_key(server, make_transport, tmp_path):
    t = make_transport(inventory(("n1", server)), HostKeyPolicy([]))
    t0 = time.monotonic()
    assert await t.wait_back("n1", timeout=10, interval=0.1) is False
    assert time.monotonic() - t0 < 2
    assert t.last_failure["n1"].startswith("host key refused")


async def test_a_refused_reboot_is_returned_as_is(server, make_transport, tmp_path):
    t = make_transport(inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]))
    r = await t.reboot("n1", "stderr reboot: permission denied")
    assert (r.exit_status, r.unknown_reason) == (1, None)
    assert "permission denied" in r.stderr


async def test_exit_0_without_going_down_is_unknown(server, make_transport, tmp_path):
    t = make_transport(inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]))
    r = await t.reboot("n1", "true", timeout=0.3)
    assert r.exit_status == 0
    assert r.unknown_reason == "reboot command exited 0 but n1 did not go down within 0.3s"
    assert t.connected() == set()


async def test_a_hung_reboot_command_is_unknown_and_its_connection_not_reused(
    server, make_transport, tmp_path
):
    t = make_transport(inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]))
    r = await t.reboot("n1", "sleep 5", timeout=0.3)
    assert r.unknown_reason == "timeout after 0.3s"
    assert (await t.run("n1", "true", timeout=5)).ok
    assert server.stats.connections == 2
