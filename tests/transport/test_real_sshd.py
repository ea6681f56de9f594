"""Against a real OpenSSH sshd on loopback (tests/sshd_server.py)."""

from __future__ import annotations

import asyncio
import os

import psutil
import pytest

from runbook.definition.model import Host
from runbook.transport import HostKeyPolicy, Transport
from tests.sshd_server import SshdServer
from tests.transport.conftest import known_hosts

pytestmark = pytest.mark.sshd


def _hosts(srv: SshdServer, name: str = "n1", **extra) -> dict[str, Host]:
    return {
        name: Host(
            name,
            {
                "ansible_host": srv.addr,
                "ansible_port": srv.port,
                "ansible_user": srv.user,
                "ansible_ssh_private_key_file": str(srv.client_key),
                **extra,
            },
        )
    }


@pytest.fixture
async def transport(sshd_server):
    seen = []
    t = Transport(
        _hosts(sshd_server),
        policy=HostKeyPolicy([sshd_server.known_hosts]),
        ssh_config=[],
        connect_timeout=5,
        on_host_key=lambda *a: seen.append(a),
    )
    t.host_keys_seen = seen
    yield t
    await t.close()


async def test_real_commands_over_one_connection(transport, sshd_server):
    r = await transport.run("n1", "uname -r", timeout=10)
    assert (r.exit_status, r.stdout, r.unknown_reason) == (0, os.uname().release + "\n", None)
    r = await transport.run("n1", "cat /proc/meminfo | head -3", timeout=10)
    lines = r.stdout.splitlines()
    assert r.exit_status == 0 and len(lines) == 3 and lines[0].startswith("MemTotal:")
    r = await transport.run("n1", "sh -c 'exit 3'", timeout=10)
    assert (r.exit_status, r.unknown_reason) == (3, None)
    r = await transport.run("n1", "echo out; echo err >&2", timeout=10)
    assert (r.stdout, r.stderr) == ("out\n", "err\n")
    # $PPID of the command is sshd's session process: the same one every time.
    ppids = {(await transport.run("n1", "echo $PPID", timeout=10)).stdout for _ in range(3)}
    assert len(ppids) == 1
    fp = sshd_server.host_public_key().get_fingerprint("sha256")
    assert transport.host_keys_seen == [("n1", fp, "known_hosts")]
    conn = transport._pool.peek("n1")
    assert conn.get_extra_info("send_cipher") == "aes128-gcm@openssh.com"


async def test_timeout_is_unknown_and_the_connection_survives(transport):
    ppid = (await transport.run("n1", "echo $PPID", timeout=10)).stdout
    r = await transport.run("n1", "sleep 5", timeout=1)
    assert r.unknown_reason == "timeout after 1s"
    assert (r.exit_status, r.started_remote) == (None, True)
    assert r.ended - r.started < 3
    await asyncio.sleep(0.2)
    r = await transport.run("n1", "echo $PPID", timeout=10)
    assert (r.exit_status, r.stdout) == (0, ppid)  # sshd acknowledged the close: same connection


async def test_changed_host_key_is_refused(sshd_server):
    known = sshd_server.dir / "known_hosts.old"
    known.write_text(sshd_server.known_hosts_line())
    old_fp = sshd_server.host_public_key().get_fingerprint("sha256")
    sshd_server.new_host_key()
    sshd_server.restart()
    new_fp = sshd_server.host_public_key().get_fingerprint("sha256")
    t = Transport(
        _hosts(sshd_server, "gpu07"), policy=HostKeyPolicy([known]), ssh_config=[], connect_timeout=5
    )
    try:
        r = await t.run("gpu07", "true", timeout=10)
    finally:
        await t.close()
    assert r.unknown_reason == (
        f"host key refused: host key for gpu07 changed: expected {old_fp}, got {new_fp} — "
        f"if the node was reinstalled, remove the old key from {known}"
    )
    assert r.started_remote is False


async def test_trust_new_pins_the_real_host_key(sshd_server, tmp_path):
    pins = tmp_path / "pins"
    t = Transport(
        _hosts(sshd_server),
        policy=HostKeyPolicy([], trust_new=True, pin_file=pins),
        ssh_config=[],
        connect_timeout=5,
    )
    try:
        assert (await t.run("n1", "true", timeout=10)).ok
    finally:
        await t.close()
    assert pins.read_text() == sshd_server.known_hosts_line()


async def test_a_dropped_session_counts_as_a_reboot(transport):
    # Killing the sshd session process drops the connection the way a reboot does.
    r = await transport.reboot("n1", "kill -9 $PPID", timeout=10)
    assert (r.unknown_reason, r.exit_status) == (None, None)
    assert await transport.wait_back("n1", timeout=10, interval=0.2)


async def test_proxy_jump_through_real_sshd(sshd_server, server, tmp_path, client_key_file):
    """sshd as the bastion, forwarding to an in-process SSH server."""
    cfg = tmp_path / "ssh_config"
    cfg.write_text(
        f"Host bastion\n  HostName 127.0.0.1\n  Port {sshd_server.port}\n"
        f"  User {sshd_server.user}\n  IdentityFile {sshd_server.client_key}\n"
        f"Host node1\n  HostName 127.0.0.1\n  Port {server.port}\n  User root\n"
        f"  ProxyJump bastion\n"
    )
    kh = known_hosts(tmp_path, server)
    kh.write_text(kh.read_text() + sshd_server.known_hosts_line())
    t = Transport(
        {"node1": Host("node1")},
        policy=HostKeyPolicy([kh]),
        ssh_config=[cfg],
        client_keys=[client_key_file],
        connect_timeout=5,
    )
    try:
        r = await t.run("node1", "echo behind", timeout=10)
        assert (r.exit_status, r.stdout) == (0, "behind\n")
        # The target's peer socket belongs to sshd (it forwarded), not to this process.
        peer_port = server.stats.peers[0][1]
        owners = {
            c.pid
            for c in psutil.net_connections("tcp")
            if c.laddr and c.laddr.port == peer_port and c.status == "ESTABLISHED"
        }
        sshd_pids = {sshd_server.proc.pid} | {
            p.pid for p in psutil.Process(sshd_server.proc.pid).children(recursive=True)
        }
        assert owners and owners <= sshd_pids
    finally:
        await t.close()
