"""A small instrumented asyncssh server on 127.0.0.1 (port 0) for transport
tests. It answers a handful of commands from a table (nothing is executed) and
counts what the client does: connections, concurrent handshakes, exec
requests, signals and channel closes."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import asyncssh


@dataclass
class Stats:
    connections: int = 0
    handshaking: int = 0
    max_handshaking: int = 0
    execs: list[str] = field(default_factory=list)
    signals: list[str] = field(default_factory=list)
    channels_closed: int = 0
    forwards: list[tuple[str, int]] = field(default_factory=list)  # direct-tcpip requests (as a bastion)
    peers: list[tuple[str, int]] = field(default_factory=list)


class _Session(asyncssh.SSHServerSession):
    def __init__(self, srv: LoopbackServer, conn):
        self.srv, self.conn, self.chan, self.task = srv, conn, None, None

    def connection_made(self, chan):
        self.chan = chan

    def exec_requested(self, command: str) -> bool:
        self.srv.stats.execs.append(command)
        self.command = command
        return True

    def session_started(self):
        self.task = asyncio.ensure_future(self._run(self.command))

    def signal_received(self, signal: str) -> None:
        self.srv.stats.signals.append(signal)

    def connection_lost(self, exc):
        self.srv.stats.channels_closed += 1
        if self.task and not self.task.done():
            self.task.cancel()

    async def _run(self, command: str) -> None:
        ch = self.chan
        word, _, arg = command.partition(" ")
        if word == "echo":
            ch.write(arg.encode() + b"\n")
            ch.exit(0)
        elif word == "true":
            ch.exit(0)
        elif word == "exit":
            ch.exit(int(arg))
        elif word == "stderr":
            ch.write_stderr(arg.encode() + b"\n")
            ch.exit(1)
        elif word == "sleep":
            await asyncio.sleep(float(arg))
            ch.exit(0)
        elif word == "freeze":  # stop reading the socket: a hung host
            self.conn._transport.pause_reading()
        elif word == "drop":  # connection lost mid-command
            ch.write(b"partial\n")
            await asyncio.sleep(0.05)
            self.conn.abort()
        elif word == "reboot":
            await asyncio.sleep(0.05)
            if self.srv.down_after_reboot:
                self.srv.background.add(asyncio.ensure_future(self.srv.go_down(self.srv.down_after_reboot)))
            else:
                self.conn.abort()
        elif word == "chunks":  # given bytes, written in pieces with pauses in between
            for piece in self.srv.chunks:
                ch.write(piece[1:], 1 if piece[:1] == b"E" else None)
                await asyncio.sleep(0.1)
            ch.exit(0)
        elif word == "big":
            block = b"x" * 65535 + b"\n"
            for _ in range(int(arg) // len(block) + 1):
                ch.write(block)  # buffered by the channel, sent as the window allows
            ch.exit(0)
        else:
            ch.write_stderr(f"{word}: command not found\n".encode())
            ch.exit(127)


class _Server(asyncssh.SSHServer):
    def __init__(self, srv: LoopbackServer):
        self.srv = srv
        self.conn = None
        self.authed = False

    def connection_made(self, conn):
        s = self.srv.stats
        self.conn = conn
        self.srv.conns.add(conn)
        s.connections += 1
        s.peers.append(conn.get_extra_info("peername")[:2])
        if self.srv.drop_handshakes > 0:  # like sshd over MaxStartups: close before the banner
            self.srv.drop_handshakes -= 1
            conn.abort()
            return
        s.handshaking += 1
        s.max_handshaking = max(s.max_handshaking, s.handshaking)

    def connection_lost(self, exc):
        self.srv.conns.discard(self.conn)
        if not self.authed and self.conn is not None:
            self.srv.stats.handshaking = max(0, self.srv.stats.handshaking - 1)

    async def begin_auth(self, username: str) -> bool:
        if self.srv.handshake_delay:
            await asyncio.sleep(self.srv.handshake_delay)
        return True

    def auth_completed(self) -> None:
        self.authed = True
        self.srv.stats.handshaking -= 1

    def public_key_auth_supported(self) -> bool:
        return True

    def validate_public_key(self, username: str, key) -> bool:
        return key.public_data == self.srv.client_key.public_data

    def session_requested(self):
        if self.srv.refuse_sessions > 0:
            self.srv.refuse_sessions -= 1
            return False
        return _Session(self.srv, self.conn)

    def connection_requested(self, dest_host, dest_port, orig_host, orig_port):
        self.srv.stats.forwards.append((dest_host, dest_port))
        return True  # act as a bastion: forward direct-tcpip


class LoopbackServer:
    def __init__(self, host_key: asyncssh.SSHKey, client_key: asyncssh.SSHKey, addr: str = "127.0.0.1"):
        self.host_key = host_key
        self.client_key = client_key
        self.addr = addr
        self.port = 0
        self.stats = Stats()
        self.handshake_delay = 0.0
        self.drop_handshakes = 0
        self.refuse_sessions = 0
        self.down_after_reboot = 0.0
        self.chunks: list[bytes] = []
        self.conns: set = set()
        self.background: set = set()
        self._acceptor = None

    async def start(self) -> LoopbackServer:
        self._acceptor = await asyncssh.create_server(
            lambda: _Server(self),
            self.addr,
            self.port,
            server_host_keys=[self.host_key],
            reuse_address=True,
            login_timeout=10,
            encoding=None,
        )
        self.port = self._acceptor.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        """Stop listening and drop every open connection."""
        for task in list(self.background):
            if task is not asyncio.current_task():
                task.cancel()
        for conn in list(self.conns):
            conn.abort()
        if self._acceptor is not None:
            self._acceptor.close()
            await self._acceptor.wait_closed()
            self._acceptor = None

    async def restart(self, host_key: asyncssh.SSHKey | None = None) -> None:
        """Same address and port, optionally another host key (a reinstalled node)."""
        await self.stop()
        if host_key is not None:
            self.host_key = host_key
        await self.start()

    async def go_down(self, seconds: float) -> None:
        """Stop listening for a while, as a rebooting node does."""
        await self.stop()
        await asyncio.sleep(seconds)
        await self.start()

    def known_hosts_line(self, key: asyncssh.SSHKey | None = None) -> str:
        pub = (key or self.host_key).export_public_key("openssh").decode().split()
        return f"[{self.addr}]:{self.port} {pub[0]} {pub[1]}\n"
