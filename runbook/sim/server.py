"""The SSH side of one simulated node: its listener on its own loopback address,
its live connections, reboots, and the behaviour faults (unreachable, hang,
slow, host_key_changed)."""

from __future__ import annotations

import asyncio
import socket
from typing import TYPE_CHECKING

import asyncssh

from ..transport.coalesce import coalesce
from .exec_session import ExecSession
from .lean_ssh import lean
from .machine import Machine
from .session import run_line

if TYPE_CHECKING:
    from .lab import Lab

# AES-GCM first: the cheapest cipher on x86 with AES-NI (hundreds of sessions on 2 cores).
CIPHERS = [
    "aes128-gcm@openssh.com",
    "aes256-gcm@openssh.com",
    "chacha20-poly1305@openssh.com",
    "aes128-ctr",
    "aes256-ctr",
]


class _Tracker(asyncssh.SSHServer):
    def __init__(self, node: SimNode):
        self.node = node
        self.conn = None

    def connection_made(self, conn) -> None:
        self.conn = conn
        self.node.conns.add(conn)
        coalesce(conn)  # one socket write per loop turn, not one per SSH packet (transport/coalesce.py)
        lean(conn)  # no SSH_MSG_IGNORE before every packet, no unwanted log messages (sim/lean_ssh.py)

    def connection_lost(self, exc) -> None:
        self.node.conns.discard(self.conn)

    def session_requested(self):
        return ExecSession(self.node)  # exec without asyncssh's process layer (sim/exec_session.py)

    async def begin_auth(self, username: str) -> bool:
        # An overloaded server that accepted the TCP connection but never
        # answers the handshake (sim/loadfaults.py): the client's login timeout fires.
        faults = self.node.lab.load_faults
        if faults.take_stall():
            await asyncio.sleep(faults.stall_seconds)
        return True  # authentication is required (asyncssh's default)


class SimNode:
    def __init__(
        self,
        lab: Lab,
        machine: Machine,
        address: str,
        port: int,
        host_key: asyncssh.SSHKey,
        presented_key: asyncssh.SSHKey,
    ):
        self.lab = lab
        self.machine = machine
        self.address = address
        self.port = port
        self.host_key = host_key  # the key in known_hosts
        self.presented_key = presented_key  # differs for host_key_changed
        self.acceptor = None
        self._reserved: socket.socket | None = None
        self.conns: set = set()
        self.up = False
        self.rebooting: asyncio.Task | None = None
        machine.is_up = lambda: self.up

    @property
    def name(self) -> str:
        return self.machine.name

    @property
    def state(self):
        return self.machine.state

    async def start(self) -> None:
        if "unreachable" in self.state.faults:
            self._reserve_port()
            return
        self.acceptor = await asyncssh.listen(
            self.address,
            self.port,
            options=self.lab.ssh_options,
            server_host_keys=[self.presented_key],
            server_factory=lambda: _Tracker(self),
        )
        self.port = self.acceptor.sockets[0].getsockname()[1]
        self.up = True

    def _reserve_port(self) -> None:
        """Connection refused, but the port stays ours: bound, never listening."""
        if self._reserved is None:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.address, self.port))
            self._reserved = sock
            self.port = sock.getsockname()[1]

    async def stop(self) -> None:
        self.up = False
        if self.rebooting and not self.rebooting.done():
            self.rebooting.cancel()
        await self._go_down()
        if self._reserved is not None:
            self._reserved.close()
            self._reserved = None

    async def _go_down(self) -> None:
        self.up = False
        if self.acceptor is not None:
            self.acceptor.close()
            await self.acceptor.wait_closed()
            self.acceptor = None
        for conn in list(self.conns):
            conn.abort()
        self.conns.clear()

    # ---- commands and reboots ---------------------------------------------
    async def run(self, command: str, stdin: str = "") -> tuple[str, str, int]:
        """Run a command line on this node without SSH (tests, the lab API)."""
        if not self.up:
            raise ConnectionRefusedError(f"{self.name} is not answering")
        result = await run_line(self.machine, command, stdin)
        self.after_command()
        return result

    def after_command(self) -> None:
        if self.machine.reboot_requested and (self.rebooting is None or self.rebooting.done()):
            self.machine.reboot_requested = False
            self.rebooting = asyncio.ensure_future(self._reboot())

    async def _reboot(self) -> None:
        await asyncio.sleep(0.05)  # let the `reboot` command's exit status reach the client
        await self._go_down()
        await asyncio.sleep(self.lab.reboot_seconds)
        self.lab.cluster.boot(self.state)
        await self._boot_units()
        self.lab.mark_dirty(self.name)
        await self.start()

    async def _boot_units(self) -> None:
        """systemd starts every enabled unit of /etc/systemd/system: run its ExecStart."""
        import re

        for unit in list(self.state.units_enabled):
            text = self.state.files.get(f"/etc/systemd/system/{unit}.service", "")
            for line in re.findall(r"^ExecStart=(.+)$", text, re.M):
                await run_line(self.machine, line.strip())

    async def wait_up(self, timeout: float = 30.0) -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while not self.up:
            if loop.time() > end:
                raise TimeoutError(f"{self.name} did not come back")
            await asyncio.sleep(0.02)
