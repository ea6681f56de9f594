"""Fixtures for transport tests: generated keys, an instrumented in-process
SSH server on loopback, a Transport factory that closes what it opened, and
the real OpenSSH sshd fixture (shared in tests/sshd_server.py)."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import asyncssh
import pytest

from runbook.definition.model import Host
from runbook.transport import HostKeyPolicy, Transport
from tests.sshd_server import sshd_server  # noqa: F401 - re-exported fixture
from tests.transport.loopback_ssh import LoopbackServer


@pytest.fixture(scope="session")
def keys():
    gen = lambda: asyncssh.generate_private_key("ssh-ed25519")
    return SimpleNamespace(host=gen(), host2=gen(), client=gen(), stranger=gen())


@pytest.fixture
def client_key_file(tmp_path, keys) -> str:
    path = tmp_path / "client_key"
    keys.client.write_private_key(str(path))
    os.chmod(path, 0o600)
    return str(path)


@pytest.fixture
async def server(keys):
    srv = await LoopbackServer(keys.host, keys.client).start()
    yield srv
    await srv.stop()


def inventory(*entries: tuple[str, LoopbackServer], **extra_vars) -> dict[str, Host]:
    return {
        name: Host(
            name, {"ansible_host": srv.addr, "ansible_port": srv.port, "ansible_user": "root", **extra_vars}
        )
        for name, srv in entries
    }


def known_hosts(tmp_path: Path, *servers: LoopbackServer, name: str = "known_hosts") -> Path:
    path = tmp_path / name
    path.write_text("".join(s.known_hosts_line() for s in servers))
    return path


@pytest.fixture
async def make_transport(client_key_file):
    """make_transport(hosts, policy=..., **kw): a Transport with our client key and no
    ~/.ssh/config; closed at teardown."""
    made: list[Transport] = []

    def make(hosts: dict[str, Host], policy: HostKeyPolicy, **kw) -> Transport:
        kw.setdefault("client_keys", [client_key_file])
        kw.setdefault("ssh_config", [])
        kw.setdefault("connect_timeout", 5)
        t = Transport(hosts, policy=policy, **kw)
        made.append(t)
        return t

    yield make
    for t in made:
        await t.close()
