"""TCP connects started before asyncssh is even imported (a new `runbook run`).

Importing asyncssh takes ~0.14 s (its crypto back-ends); the first step's hosts are
known before that, once the inventory and the runbook are read. So their TCP
connections are opened first, with the standard library only, and the SSH
handshakes later run over them (asyncssh's `sock=`): the TCP round trip and the
server's start on accept (OpenSSH forks and re-executes itself for every
connection, then loads its host keys) overlap the imports instead of following
them. bench/cold_phases.py shows the phases.

Only where the address is certain without asyncssh: no ~/.ssh/config (it may
rename the host, change its port, or put a jump host or a proxy command in front),
no ssh arguments in the inventory (`-J`, `-o ProxyCommand=...`), and an address
that is an IP literal (no name lookup here). The transport hands a socket over
only to a target that resolved, by its own rules, to the same address and port
with no jump host or proxy (connect.py): anything else connects as before, and
the sockets nobody took are closed with the transport. Host keys
are checked on these connections exactly as on any other: the socket only
replaces asyncssh's own TCP connect."""

from __future__ import annotations

import errno
import socket
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from . import ansible_vars
from .limits import DEFAULT_MAX_HANDSHAKES

if TYPE_CHECKING:
    from ..definition.model import Inventory


def direct_address(name: str, vars_: dict) -> tuple[str, int] | None:
    """(IP, port) the transport will connect `name` to when no ssh config applies;
    None when that is not certain from the inventory alone."""
    if any(vars_.get(v) for v in ansible_vars.SSH_ARGS):  # may hold a jump host or a proxy
        return None
    address = str(ansible_vars.first(vars_, ansible_vars.ADDRESS) or name)
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        socket.inet_pton(family, address)  # an IP literal, as the transport will connect to it
    except (OSError, ValueError):
        return None  # a name: resolving it here could block
    port_var = ansible_vars.first(vars_, ansible_vars.PORT)
    try:
        port = 22 if port_var is None else int(port_var)
    except (TypeError, ValueError):
        return None  # the transport reports the bad value
    if not 0 < port < 65536:
        return None
    return address, port


def ssh_config_present() -> bool:
    """The file the transport reads by default (Transport's ssh_config)."""
    try:
        return Path("~/.ssh/config").expanduser().is_file()
    except (OSError, RuntimeError):  # no home directory: say present, so nothing is dialled
        return True


class PreDialed:
    """Non-blocking TCP connects, one per address, each taken at most once."""

    def __init__(self, addresses: Iterable[tuple[str, int]]):
        self._socks: dict[tuple[str, int], socket.socket] = {}
        for address in addresses:
            self._dial(address)

    def _dial(self, address: tuple[str, int]) -> None:
        if address in self._socks:
            return
        sock = None
        try:
            family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            # No Nagle, as on the loop's own connections: asyncio sets TCP_NODELAY
            # only on a socket made with proto IPPROTO_TCP (base_events._set_nodelay),
            # not on this one (proto 0), and an SSH handshake's and a command's small
            # packets would wait for the peer's delayed ACKs
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setblocking(False)
            if sock.connect_ex(address) not in (0, errno.EINPROGRESS):
                sock.close()  # refused at once, or no route: the transport's connect says so
                return
        except OSError:  # out of descriptors and the like: that host connects as before
            if sock is not None:
                sock.close()
            return
        self._socks[address] = sock

    def want(self, addresses: Iterable[tuple[str, int]]) -> None:
        """Keep the connects to `addresses`, close the others, dial those missing
        (connects started from a remembered plan: workspace/dial_plan.py)."""
        wanted = list(addresses)
        keep = set(wanted)
        for address in [a for a in self._socks if a not in keep]:
            self._socks.pop(address).close()
        for address in wanted:
            self._dial(address)

    def __len__(self) -> int:
        return len(self._socks)

    async def take(self, host: str, port: int, timeout: float) -> socket.socket | None:
        """The connected socket to (host, port), once; None when none was dialled. A
        dial that failed raises what the transport's own connect would have (OSError,
        ConnectionRefusedError, ...), one still unanswered after `timeout` raises
        TimeoutError: a dead node costs one connect timeout, not two."""
        sock = self._socks.pop((host, port), None)
        if sock is None:
            return None
        try:
            await _connected(sock, (host, port), timeout)
        except BaseException:
            sock.close()
            raise
        return sock

    def close(self) -> None:
        for sock in self._socks.values():
            sock.close()
        self._socks.clear()


async def _connected(sock: socket.socket, address: tuple[str, int], timeout: float) -> None:
    """Wait at most `timeout` for the non-blocking connect of `sock`; raise as asyncio's
    own connect does when it failed (the same exception, the same words)."""
    import asyncio  # here: the module is imported before asyncio is (see above)

    try:
        sock.getpeername()
        return  # connected
    except OSError as e:
        if e.errno != errno.ENOTCONN:
            raise
    err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if not err:
        loop = asyncio.get_running_loop()
        writable = loop.create_future()
        fd = sock.fileno()
        loop.add_writer(fd, lambda: writable.done() or writable.set_result(None))
        try:
            await asyncio.wait_for(writable, timeout)
        finally:
            loop.remove_writer(fd)
        err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if err:
        # OSError(errno, ...) is the errno's own subclass (ConnectionRefusedError, ...)
        raise OSError(err, f"Connect call failed {address}")


def first_addresses(inventory: Inventory, hosts: list[str], limit: int | None) -> list[tuple[str, int]]:
    """The addresses of the first `limit` of `hosts` (those the transport will
    handshake with first; `limit` None: the transport's default) that are certain,
    in that order; [] when an ssh config may change them all."""
    if ssh_config_present():
        return []
    addresses = []
    for name in hosts[: limit or DEFAULT_MAX_HANDSHAKES]:
        host = inventory.hosts.get(name)
        address = direct_address(name, host.vars) if host is not None else None
        if address is not None:
            addresses.append(address)
    return addresses
