"""transport/direct_connect.py: a connection's options built on the loop, not in a
worker thread. Against the instrumented loopback server: the transport's
connections use no executor and get the same host-key check, timeout and
result; an asyncssh without the private `_connect` gets asyncssh.connect; a
connection without our keys (asyncssh would read ~/.ssh) goes through
asyncssh.connect too."""

from __future__ import annotations

import asyncio
import socket

import asyncssh

from runbook.transport import HostKeyPolicy, direct_connect
from tests.transport.conftest import inventory, known_hosts


class _Executor:
    """Counts the jobs given to the loop's default executor (asyncssh.connect builds
    each connection's options there)."""

    def __init__(self, monkeypatch):
        self.jobs: list[str] = []
        loop = asyncio.get_running_loop()
        real = loop.run_in_executor

        def counted(executor, func, *args):
            self.jobs.append(getattr(getattr(func, "func", func), "__qualname__", repr(func)))
            return real(executor, func, *args)

        monkeypatch.setattr(loop, "run_in_executor", counted)


def test_the_installed_asyncssh_has_what_the_direct_path_needs():
    # pyproject's asyncssh: if this fails, a new asyncssh changed `_connect` and
    # every connection went back to a worker thread (slower, still right)
    assert direct_connect.AVAILABLE


async def test_the_transport_builds_no_options_in_a_worker_thread(
    server, make_transport, tmp_path, monkeypatch
):
    ex = _Executor(monkeypatch)
    t = make_transport(
        inventory(("n1", server), ("n2", server)), HostKeyPolicy([known_hosts(tmp_path, server)])
    )
    rs = await asyncio.gather(t.run("n1", "echo hi", timeout=10), t.run("n2", "echo ho", timeout=10))
    assert [(r.exit_status, r.stdout) for r in rs] == [(0, "hi\n"), (0, "ho\n")]
    assert server.stats.connections == 2
    assert not [j for j in ex.jobs if j == "SSHClientConnectionOptions"], ex.jobs


async def test_without_the_private_connect_asyncssh_connect_is_used(
    server, make_transport, tmp_path, monkeypatch
):
    monkeypatch.setattr(direct_connect, "AVAILABLE", False)
    ex = _Executor(monkeypatch)
    t = make_transport(inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]))
    r = await t.run("n1", "echo hi", timeout=10)
    assert (r.exit_status, r.stdout) == (0, "hi\n")
    assert [j for j in ex.jobs if j == "SSHClientConnectionOptions"] == ["SSHClientConnectionOptions"]


async def test_the_same_host_key_check(server, make_transport, tmp_path, keys, monkeypatch):
    stranger = tmp_path / "known_hosts"
    stranger.write_text(f"[{server.addr}]:{server.port} {keys.stranger.export_public_key().decode()}")
    ex = _Executor(monkeypatch)
    t = make_transport(inventory(("n1", server)), HostKeyPolicy([stranger]))
    r = await t.run("n1", "echo hi", timeout=10)
    assert r.exit_status is None and r.unknown_reason.startswith("host key refused"), r.unknown_reason
    assert server.stats.execs == [] and "SSHClientConnectionOptions" not in ex.jobs


async def test_the_connect_timeout_still_bounds_the_handshake(tmp_path):
    # a listener that accepts TCP and never says a word: the SSH banner never comes
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    port = silent.getsockname()[1]
    try:
        base = asyncssh.SSHClientConnectionOptions(config=[])
        loop = asyncio.get_running_loop()
        began = loop.time()
        try:
            await direct_connect.connect(
                "127.0.0.1",
                port,
                options=base,
                config=[],
                known_hosts=lambda h, a, p: ([], [], []),
                client_keys=[asyncssh.generate_private_key("ssh-ed25519")],
                connect_timeout=0.3,
            )
        except TimeoutError:
            pass
        else:
            raise AssertionError("a silent server was taken for an SSH server")
        assert loop.time() - began < 3
    finally:
        silent.close()


async def test_a_connection_without_our_keys_goes_through_asyncssh(
    server, make_transport, tmp_path, monkeypatch
):
    # no key files named and none in ~/.ssh: asyncssh looks for keys itself (file
    # reads), so it builds the options in its worker thread as it always has
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)  # and no agent to offer one
    ex = _Executor(monkeypatch)
    t = make_transport(
        inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]), client_keys=[]
    )
    r = await t.run("n1", "echo hi", timeout=10)
    assert r.exit_status is None and r.unknown_reason.startswith("auth refused"), r.unknown_reason
    assert "SSHClientConnectionOptions" in ex.jobs
