"""transport/predial.py: TCP connects started before asyncssh is imported, taken over
by the transport's handshakes. Against the instrumented loopback server: the
handshake runs over the very socket dialled early, the host key is checked as on
any connection, a refused or unanswered dial is reported as the transport's own
connect would report it (within one connect timeout), an address the target does
not resolve to is not used, and nothing dialled is left open. (tests/integration/test_real_sshd.py runs
it through `runbook run` against a real sshd.)"""

from __future__ import annotations

import asyncio
import socket

from runbook.definition.model import Host, Inventory
from runbook.transport import HostKeyPolicy
from runbook.transport.predial import PreDialed, direct_address, first_addresses
from tests.transport.conftest import inventory, known_hosts


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _local_ports(dialed: PreDialed) -> set[int]:
    return {s.getsockname()[1] for s in dialed._socks.values()}


def test_only_addresses_certain_without_ssh_config_or_a_name_lookup():
    assert direct_address("n1", {"ansible_host": "10.0.0.7"}) == ("10.0.0.7", 22)
    assert direct_address("10.0.0.8", {"ansible_port": "2222"}) == ("10.0.0.8", 2222)
    assert direct_address("n1", {"ansible_ssh_host": "fd00::7", "ansible_ssh_port": 22}) == ("fd00::7", 22)
    assert direct_address("n1", {}) is None  # a name: its lookup could block
    assert direct_address("n1", {"ansible_host": "gpu01.site"}) is None
    assert direct_address("n1", {"ansible_host": "10.0.0.7", "ansible_port": "x"}) is None
    assert direct_address("n1", {"ansible_host": "10.0.0.7", "ansible_port": 70000}) is None
    jump = {"ansible_host": "10.0.0.7", "ansible_ssh_common_args": "-J bastion"}
    assert direct_address("n1", jump) is None  # behind a jump host: not ours to dial
    proxy = {"ansible_host": "10.0.0.7", "ansible_ssh_extra_args": "-o ProxyCommand=nc %h %p"}
    assert direct_address("n1", proxy) is None


def test_nothing_is_dialled_when_an_ssh_config_may_send_the_host_elsewhere(tmp_path, monkeypatch):
    port = _closed_port()
    inv = Inventory(hosts={"n1": Host("n1", {"ansible_host": "127.0.0.1", "ansible_port": port})}, groups={})
    monkeypatch.setenv("HOME", str(tmp_path))
    assert first_addresses(inv, ["n1"], None) == [("127.0.0.1", port)]
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "config").write_text("Host *\n  ProxyJump bastion\n")
    assert first_addresses(inv, ["n1"], None) == []


def test_at_most_limit_hosts_are_dialled(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    port = _closed_port()
    hosts = {
        f"n{i}": Host(f"n{i}", {"ansible_host": f"127.0.0.{i + 1}", "ansible_port": port}) for i in range(5)
    }
    assert first_addresses(Inventory(hosts=hosts, groups={}), list(hosts), 3) == [
        (f"127.0.0.{i + 1}", port) for i in range(3)
    ]


def test_want_keeps_the_wanted_connects_closes_the_rest_and_dials_the_missing():
    """A remembered plan's connects (workspace/dial_plan.py) meet the addresses the loaded
    project wants: a stale one is closed unused, a missing one dialled."""
    listeners = [socket.create_server(("127.0.0.1", 0)) for _ in range(3)]
    try:
        a, b, c = (("127.0.0.1", s.getsockname()[1]) for s in listeners)
        dialed = PreDialed([a, b])
        stale, kept = dialed._socks[a], dialed._socks[b]
        dialed.want([b, c, b])
        assert list(dialed._socks) == [b, c]
        assert dialed._socks[b] is kept  # not dialled again
        assert stale.fileno() == -1  # closed, never handed to a connection
        dialed.want([])
        assert len(dialed) == 0 and kept.fileno() == -1
    finally:
        for s in listeners:
            s.close()


async def test_the_handshake_runs_over_the_socket_dialled_early(server, make_transport, tmp_path):
    dialed = PreDialed([(server.addr, server.port)])
    local_port = _local_ports(dialed).pop()
    t = make_transport(
        inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]), predialed=dialed
    )
    r = await t.run("n1", "echo hi", timeout=10)
    assert (r.exit_status, r.stdout, r.attempts) == (0, "hi\n", 1)
    assert len(dialed) == 0  # taken, once
    assert server.stats.connections == 1 and server.stats.peers == [("127.0.0.1", local_port)]


async def test_a_socket_dialled_early_sends_without_nagle(server, make_transport, tmp_path):
    """As the loop's own connections do: on asyncio's loop a socket made with proto 0
    gets no TCP_NODELAY from the transport (base_events._set_nodelay), and the SSH
    exchange's small packets would wait for delayed ACKs."""
    dialed = PreDialed([(server.addr, server.port)])
    (sock,) = dialed._socks.values()
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    t = make_transport(
        inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]), predialed=dialed
    )
    r = await t.run("n1", "echo hi", timeout=10)
    assert r.exit_status == 0
    (conn,) = t._pool._conns.values()
    used = conn.get_extra_info("socket")
    assert used.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


async def test_a_socket_dialled_early_gets_the_same_host_key_check(server, make_transport, tmp_path, keys):
    stranger = tmp_path / "known_hosts"
    stranger.write_text(f"[{server.addr}]:{server.port} {keys.stranger.export_public_key().decode()}")
    dialed = PreDialed([(server.addr, server.port)])
    t = make_transport(inventory(("n1", server)), HostKeyPolicy([stranger]), predialed=dialed)
    r = await t.run("n1", "echo hi", timeout=10)
    assert r.exit_status is None and r.unknown_reason.startswith("host key refused"), r.unknown_reason
    assert len(dialed) == 0 and server.stats.execs == []


async def test_a_refused_dial_is_reported_as_a_refused_connect(server, make_transport):
    hosts = inventory(("n1", server))
    hosts["n1"].vars["ansible_port"] = port = _closed_port()
    dialed = PreDialed([("127.0.0.1", port)])
    t = make_transport(hosts, HostKeyPolicy([]), predialed=dialed)
    r = await t.run("n1", "true", timeout=5)
    assert r.unknown_reason == "unreachable: connection refused"
    assert len(dialed) == 0


async def test_an_unanswered_dial_costs_one_connect_timeout_not_two(server, make_transport):
    # a listener that never accepts, its queue full: further SYNs go unanswered
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(0)
    port = silent.getsockname()[1]
    fillers = []
    try:
        for _ in range(4):
            f = socket.socket()
            f.setblocking(False)
            f.connect_ex(("127.0.0.1", port))
            fillers.append(f)
        hosts = inventory(("n1", server))
        hosts["n1"].vars["ansible_port"] = port
        dialed = PreDialed([("127.0.0.1", port)])
        t = make_transport(hosts, HostKeyPolicy([]), predialed=dialed, connect_timeout=0.5)
        loop = asyncio.get_running_loop()
        began = loop.time()
        r = await t.run("n1", "true", timeout=5)
        took = loop.time() - began
        assert "connect timeout after 0.5s" in r.unknown_reason, r.unknown_reason
        assert len(dialed) == 0
    finally:
        for f in fillers:
            f.close()
        silent.close()
    assert took < 0.5 * r.attempts + 0.4, (took, r.attempts)  # each attempt waited one timeout


async def test_a_dial_to_another_address_is_not_used_and_is_closed_with_the_transport(
    server, make_transport, tmp_path
):
    other = await _listener()
    try:
        dialed = PreDialed([("127.0.0.1", other.sockets[0].getsockname()[1])])
        sock = next(iter(dialed._socks.values()))
        t = make_transport(
            inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]), predialed=dialed
        )
        r = await t.run("n1", "echo hi", timeout=10)
        assert r.exit_status == 0 and len(dialed) == 1  # n1 resolved elsewhere: connected as before
        await t.close()
        assert sock.fileno() == -1 and len(dialed) == 0
    finally:
        other.close()
        await other.wait_closed()


async def _listener():
    return await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
