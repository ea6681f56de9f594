"""The transport the engine calls: run a command on an inventory host over one
pooled SSH connection per host, and report what happened as a CommandResult.

Timeouts: `connect_timeout` bounds one handshake (TCP + key exchange + auth;
waiting for a handshake slot does not count), `timeout` of `run` bounds the
command itself (channel open, exec, output, exit). On a command timeout the
command is sent SIGKILL and its channel closed (sshd refuses signals for root
sessions, so there a command that never writes again runs on until it ends);
the connection is kept only if the server still answers a keepalive within a
few seconds, and until that is known the next command on the host waits.

Retries: a command is tried a second time only when it certainly never
started: the handshake was dropped by the server (sshd's MaxStartups does
that), the pooled connection was found closed, or the channel/exec request was
refused. Never after the exec request was sent. Refused connections, connect
timeouts, auth and host-key refusals are not retried: they are answers.
Except for read-only commands (`run(..., retries=N)`, the engine's verify):
those are tried up to N more times, with a growing pause (0.5 s doubling to
4 s, jittered), when the connection dropped mid-command or the handshake
timed out or was dropped, because under load those happen to healthy hosts.
A command timeout is never retried (the host answered the handshake; a hung
tool stays hung, and a retry would multiply the step's time). A dead host is
still unknown after the last try, with its own reason and what each earlier
attempt met; a host whose handshakes kept timing out is then marked down, and
until it answers again its next commands get one handshake only (a dead node
costs (1+N) connect timeouts once, not in every step). Handshakes and
read-only commands at once adapt to load (adaptive.py): cut to half of those
in flight when they time out or drop, grown back as they succeed.

max_handshakes (default 64): sshd's MaxStartups (default 10:30:100) counts
unauthenticated connections *per sshd*. The pool shares the first connect of a
host, so each node's sshd sees at most one handshake from us at a time and
MaxStartups is not what bounds us; what does is our own CPU (asyncssh spends
~3-4 ms of client CPU per handshake, so 64 in flight already keep a core busy
while hiding network latency) and the burst a bastion or the network sees.
Only sessions on open connections are unbounded (they are cheap). When many
inventory hosts are one sshd (port forwards on a NAT box), pass 10."""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from runbook.definition.model import Host
from runbook.transport import batched
from runbook.transport.adaptive import AdaptiveLimit
from runbook.transport.connect import Connector
from runbook.transport.hostkeys import HostKeyPolicy, OnHostKey
from runbook.transport.limits import DEFAULT_MAX_HANDSHAKES
from runbook.transport.options import ConnectTarget, TargetResolver
from runbook.transport.packets import lighter_packets
from runbook.transport.pool import ConnectionPool
from runbook.transport.result import CommandResult, ConnectFailed
from runbook.transport.session import LOST_MID_COMMAND, OUTPUT_CAP, TIMEOUT_PREFIX, OnLine, Outcome, execute

if TYPE_CHECKING:
    from runbook.transport.predial import PreDialed

log = logging.getLogger(__name__)
lighter_packets()  # no padding IGNORE before each packet with AES-GCM, one AESGCM per key

_WAIT_BACK_PROBE_TIMEOUT = 10.0
# Read-only commands in flight at once: unbounded until connections drop
# mid-command or commands time out with many in flight; then half of those in
# flight (never below the floor), grown back as they complete (adaptive.py).
_COMMAND_CEILING = 100_000
_COMMAND_FLOOR = 32


def _backoff(n: int) -> float:
    """Pause before retry n (1, 2, ...): 0.5 s doubling to 4 s, jittered so a
    dropped burst does not come back as one burst."""
    return min(4.0, 0.5 * 2 ** (n - 1)) * random.uniform(0.5, 1.5)


def _noted(o: Outcome | ConnectFailed, notes: list[str]) -> Outcome | ConnectFailed:
    """Say in the result what the earlier attempts met (it is journaled with the
    result's stderr, or its unknown reason)."""
    if not notes:
        return o
    said = "; ".join(notes)
    if isinstance(o, ConnectFailed):
        return ConnectFailed(f"{o.reason} (after {said})", transient=o.transient, timed_out=o.timed_out)
    o.stderr += f"[runbook: tried again after {said}]\n"
    if o.reason is not None:
        o.reason = f"{o.reason} (after {said})"
    return o


class Transport:
    def __init__(
        self,
        hosts: dict[str, Host],
        *,
        policy: HostKeyPolicy,
        client_keys: list[str] | None = None,
        ssh_config: list[Path] | None = None,
        max_handshakes: int = DEFAULT_MAX_HANDSHAKES,
        connect_timeout: float = 15,
        keepalive_interval: float = 15,
        keepalive_count_max: int = 3,
        on_host_key: OnHostKey | None = None,
        output_cap: int = OUTPUT_CAP,
        predialed: PreDialed | None = None,
    ):
        self.hosts = hosts
        self.policy = policy
        self.output_cap = output_cap
        self.batch_token = secrets.token_hex(16)  # the markers of run_many's scripts (batch_script.py)
        if ssh_config is None:
            default = Path("~/.ssh/config").expanduser()
            ssh_config = [default] if default.is_file() else []
        self._resolver = TargetResolver(ssh_config, client_keys or [])
        self._connector = Connector(
            policy,
            max_handshakes=max_handshakes,
            connect_timeout=connect_timeout,
            keepalive_interval=keepalive_interval,
            keepalive_count_max=keepalive_count_max,
            on_host_key=on_host_key,
            predialed=predialed,
        )
        self._pool: ConnectionPool[str] = ConnectionPool()
        self.first_contact = self._connector.first_contact  # set at the first TCP contact (connect.py)
        self._commands = AdaptiveLimit(_COMMAND_CEILING, floor=_COMMAND_FLOOR)
        self._targets: dict[str, ConnectTarget] = {}
        self._ahead: dict[str, asyncio.Task] = {}  # connect_ahead: host -> its first connect
        self._feeders: set[asyncio.Task] = set()  # connect_ahead: the chunks still to start
        self.last_failure: dict[str, str] = {}  # host -> latest unknown reason (diagnostics)
        # hosts whose handshakes still timed out after a read-only command's retries:
        # one handshake per command until they answer again (see the module's docstring)
        self.down: set[str] = set()

    # -- connections -------------------------------------------------------

    def target(self, host: str) -> ConnectTarget:
        t = self._targets.get(host)
        if t is None:
            if host not in self.hosts:
                raise KeyError(f"{host} is not in the inventory")
            t = self._resolver.for_host(host, self.hosts[host].vars)
            hop: ConnectTarget | None = t
            while hop is not None:  # every known_hosts the inventory or ssh_config names
                for f in hop.known_hosts_files:
                    self.policy.add_known_hosts(f)
                hop = hop.jump
            self._targets[host] = t
        return t

    async def _connection(self, host: str, connect_timeout: float | None = None):
        ahead = self._ahead.pop(host, None)
        if ahead is not None:  # its outcome, a connection or a ConnectFailed, is this attempt's
            return await ahead
        return await self._pooled(host, connect_timeout)

    async def _pooled(self, host: str, connect_timeout: float | None = None):
        t = self.target(host)
        return await self._pool.get(host, lambda: self._connector.open(t, timeout=connect_timeout))

    def connect_ahead(self, hosts: list[str]) -> None:
        """Start connecting to `hosts` now, while the caller still prepares (a new run
        creating its store): the first command on each host then takes over that connect
        (same handshake slots, same timeout); a connect that failed is that command's
        first attempt's answer, so no host is connected to twice for it.

        In chunks: as many hosts as there are handshake slots at once, the rest after the
        first TCP contact, a chunk per turn of the loop. Each connect resolves its target
        before it waits for a slot, so a thousand connects started at once would resolve
        a thousand targets before the first handshake goes out."""
        todo = [h for h in dict.fromkeys(hosts) if h in self.hosts]
        chunk = max(1, self._connector.max_handshakes)
        self._ahead_now(todo[:chunk])
        if len(todo) > chunk:
            feeder = asyncio.ensure_future(self._ahead_rest(todo[chunk:], chunk))
            feeder.add_done_callback(lambda t: t.cancelled() or t.exception())
            self._feeders.add(feeder)
            feeder.add_done_callback(self._feeders.discard)

    def _ahead_now(self, hosts: list[str]) -> None:
        for host in hosts:
            if host in self._ahead or self._pool.has(host):  # a command got there first
                continue
            task = asyncio.ensure_future(self._pooled(host))
            # a failure nobody asks for (the run ended first) is not logged as unretrieved
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
            # also an attempt that ended before any TCP (a bad inventory value) is a contact
            task.add_done_callback(lambda _t: self.first_contact.set())
            self._ahead[host] = task

    async def _ahead_rest(self, hosts: list[str], chunk: int) -> None:
        await self.first_contact.wait()
        for i in range(0, len(hosts), chunk):
            await asyncio.sleep(0)
            self._ahead_now(hosts[i : i + chunk])

    def connected(self) -> set[str]:
        return self._pool.keys()

    async def close(self) -> None:
        for task in [*self._feeders, *self._ahead.values()]:
            task.cancel()
        self._ahead.clear()
        await self._pool.close()
        await self._connector.close()

    # -- commands ----------------------------------------------------------

    async def _attempts(
        self,
        host: str,
        command: str,
        timeout: float,
        on_line: OnLine | None,
        retries: int = 0,
        *,
        notes: list[str] | None = None,
        attempts: int = 0,
    ) -> tuple[Outcome | ConnectFailed, int]:
        """Connect (pooled) and execute, trying twice only when nothing started;
        a read-only command (`retries` > 0) is also tried again, up to `retries`
        more times with a growing pause, when its connection dropped mid-command
        or its handshake timed out: under load those say nothing about the host.
        `notes`/`attempts`: what earlier attempts met, when this goes on from them
        (a batch's connection lost mid-command, batched.py)."""
        notes = list(notes or [])
        while True:
            attempts += 1
            try:
                conn = await self._connection(host)
            except ConnectFailed as e:
                if e.transient and attempts == 1:
                    await asyncio.sleep(random.uniform(0.1, 0.5))  # spread retries of a dropped burst
                    continue
                budget = 0 if (e.timed_out and host in self.down) else retries
                if (e.transient or e.timed_out) and len(notes) < budget:
                    notes.append(f"attempt {attempts}: {e.reason}")
                    await asyncio.sleep(_backoff(len(notes)))
                    continue
                if e.timed_out and retries:
                    self.down.add(host)  # retried and still silent: the host, not the load
                return _noted(e, notes), attempts
            self.down.discard(host)
            if retries:
                async with self._commands:
                    o = await execute(conn, command, timeout=timeout, on_line=on_line, cap=self.output_cap)
                    if o.reason == LOST_MID_COMMAND or (o.reason or "").startswith(TIMEOUT_PREFIX):
                        self._commands.congestion()  # counted while still in flight (adaptive.py)
                    elif o.reason is None:
                        self._commands.success()
            else:
                o = await execute(conn, command, timeout=timeout, on_line=on_line, cap=self.output_cap)
            if o.conn_lost:
                self._pool.discard(host, conn)
            elif o.probe is not None:
                self._pool.on_probation(host, conn, o.probe)
            if o.callback_error is not None:
                log.warning("on_line callback for %s failed: %r", host, o.callback_error)
            if o.retry_ok and attempts == 1:
                continue
            if retries and o.reason == LOST_MID_COMMAND and len(notes) < retries:
                notes.append(f"attempt {attempts}: {o.reason}")
                await asyncio.sleep(_backoff(len(notes)))
                continue
            return _noted(o, notes), attempts

    async def run(
        self,
        host: str,
        command: str,
        *,
        timeout: float,
        on_line: Callable[[str, str], None] | None = None,
        retries: int = 0,
    ) -> CommandResult:
        """`retries`: only for a read-only command (a verify), never for one that
        changes the host: see `_attempts`."""
        started = time.time()
        try:
            o, attempts = await self._attempts(host, command, timeout, on_line, retries)
        except ConnectFailed as e:  # a bad inventory value found while resolving the target
            o, attempts = e, 1
        return self._result(host, command, o, attempts, started)

    def _result(
        self, host: str, command: str, o: Outcome | ConnectFailed, attempts: int, started: float
    ) -> CommandResult:
        if isinstance(o, ConnectFailed):
            self.last_failure[host] = o.reason
            return CommandResult(host, command, None, "", "", started, time.time(), o.reason, False, attempts)
        if o.reason is not None:
            self.last_failure[host] = o.reason
        return CommandResult(
            host,
            command,
            o.exit_status,
            o.stdout,
            o.stderr,
            started,
            time.time(),
            o.reason,
            o.started_remote,
            attempts,
        )

    # Read-only commands of one host, (command, timeout) each, in one channel where
    # that is possible, each reported as `run` would: batched.run_many, as a method.
    run_many = batched.run_many

    async def reboot(self, host: str, command: str = "reboot", *, timeout: float = 60.0) -> CommandResult:
        """Send the reboot. Success (unknown_reason None) is the connection dropping,
        whether during the command (exit_status None) or after it exited 0. A non-zero
        exit with the connection still up is returned as is (the reboot was refused).
        Exiting 0 without the host going down within `timeout` is unknown.
        The pooled connection is closed in every case, so `wait_back` reconnects."""
        started = time.time()
        deadline = asyncio.get_running_loop().time() + timeout
        try:
            o, attempts = await self._attempts(host, command, timeout, None)
            if isinstance(o, Outcome) and o.started_remote and o.exit_status in (0, None):
                if o.reason == LOST_MID_COMMAND:
                    o.reason = None
                    o.stderr += "[runbook: connection dropped by the reboot]\n"
                elif o.exit_status == 0:
                    conn = self._pool.peek(host)
                    remaining = deadline - asyncio.get_running_loop().time()
                    try:
                        if conn is not None:
                            await asyncio.wait_for(conn.wait_closed(), max(remaining, 0))
                    except TimeoutError:
                        o.reason = f"reboot command exited 0 but {host} did not go down within {timeout:g}s"
        except ConnectFailed as e:
            o, attempts = e, 1
        finally:
            self._pool.discard(host)
        return self._result(host, command, o, attempts, started)

    async def wait_back(self, host: str, *, timeout: float, interval: float = 1.0) -> bool:
        """Reconnect until the host answers `true` again (after a reboot); False at the
        deadline, or at once when its host key is refused (waiting will not fix that)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        try:
            t = self.target(host)
        except ConnectFailed as e:
            self.last_failure[host] = e.reason
            return False
        while (remaining := deadline - loop.time()) > 0:
            try:
                conn = await self._pool.get(
                    host,
                    lambda: self._connector.open(t, timeout=min(self._connector.connect_timeout, remaining)),
                )
                o = await execute(conn, "true", timeout=min(_WAIT_BACK_PROBE_TIMEOUT, remaining))
                if o.exit_status == 0:
                    self.last_failure.pop(host, None)
                    return True
                if o.probe is not None:
                    o.probe.close()  # not worth judging: start over with a fresh connection
                self._pool.discard(host, conn)
                self.last_failure[host] = o.reason or f"`true` exited {o.exit_status}"
            except ConnectFailed as e:
                self.last_failure[host] = e.reason
                if e.reason.startswith("host key refused"):
                    return False
            await asyncio.sleep(max(0.0, min(interval, deadline - loop.time())))
        return False
