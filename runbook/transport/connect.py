"""Opening one SSH connection: bounded handshakes, our host-key policy, keys
loaded once, AES-GCM preferred, jump hosts shared, and every failure turned
into a one-line unknown reason (`ConnectFailed`)."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path
from typing import TYPE_CHECKING

import asyncssh
from asyncssh.encryption import get_default_encryption_algs
from asyncssh.public_key import get_default_certificate_algs, get_default_public_key_algs

from runbook.transport import direct_connect
from runbook.transport.adaptive import AdaptiveLimit
from runbook.transport.coalesce import coalesce_client
from runbook.transport.hostkeys import HostKeyCheck, HostKeyPolicy, OnHostKey
from runbook.transport.options import ConnectTarget
from runbook.transport.pool import ConnectionPool
from runbook.transport.result import ConnectFailed

if TYPE_CHECKING:
    from runbook.transport.predial import PreDialed

# AES-GCM first where both ends offer it: with AES-NI it costs the client
# ~15% less CPU per handshake and ~40% less per command than chacha20-poly1305
# (asyncssh's first choice), see /work/shared/anchors-bench/RESULTS.md.
_GCM = ["aes128-gcm@openssh.com", "aes256-gcm@openssh.com"]
ENCRYPTION_ALGS = _GCM + [a.decode() for a in get_default_encryption_algs() if a.decode() not in _GCM]

DEFAULT_KEY_NAMES = ("id_ed25519", "id_ecdsa", "id_rsa")


class _Client(asyncssh.SSHClient):
    """Per-connection asyncssh client: routes host-key decisions to the policy."""

    def __init__(self, check: HostKeyCheck, contact: asyncio.Event):
        self.check = check
        self.contact = contact

    def connection_made(self, conn) -> None:
        self.contact.set()  # TCP is up (before the key exchange): Connector.first_contact
        coalesce_client(conn)  # one socket write per loop turn on asyncio (coalesce.py)

    def validate_host_public_key(self, host, addr, port, key) -> bool:
        return self.check.validate(key)

    def begin_auth(self, username: str) -> None:
        self.check.kex_done()  # key exchange verified the host's signature


class Connector:
    def __init__(
        self,
        policy: HostKeyPolicy,
        *,
        max_handshakes: int,
        connect_timeout: float,
        keepalive_interval: float,
        keepalive_count_max: int,
        on_host_key: OnHostKey | None,
        predialed: PreDialed | None = None,
    ):
        self.policy = policy
        # TCP connects the caller started before asyncssh was imported (predial.py)
        self.predialed = predialed
        self.connect_timeout = connect_timeout
        self.max_handshakes = max_handshakes
        self.on_host_key = on_host_key
        # Handshakes at once: halved when handshakes time out or are dropped (the
        # other side, or our own CPU, is overloaded), grown back as they succeed.
        self._handshakes = AdaptiveLimit(max_handshakes, floor=min(8, max_handshakes))
        self._base = asyncssh.SSHClientConnectionOptions(
            encryption_algs=ENCRYPTION_ALGS,
            keepalive_interval=keepalive_interval,
            keepalive_count_max=keepalive_count_max,
            config=[],  # ~/.ssh/config was applied once by options.py; not re-read per connect
            x509_trusted_certs=None,
            x509_trusted_cert_paths=[],
        )
        self._keys: dict[tuple[str, ...], tuple[list, list[str]]] = {}
        # Set by the first TCP connection made, or the first handshake that failed: a
        # caller that prepares meanwhile can let the first handshakes go out before it
        # starts competing with them (workspace/connecting.py).
        self.first_contact = asyncio.Event()
        self.jumps: ConnectionPool = ConnectionPool()

    def _client_keys(self, files: tuple[str, ...]) -> tuple[list, list[str]]:
        """Load each key file once per run; (keypairs, problems)."""
        if files not in self._keys:
            if not files:
                home = Path("~/.ssh").expanduser()
                files = tuple(str(home / n) for n in DEFAULT_KEY_NAMES if (home / n).exists())
            pairs: list = []
            problems: list[str] = []
            for f in files:
                try:
                    pairs.extend(asyncssh.load_keypairs([f]))
                except (OSError, asyncssh.KeyImportError, ValueError) as e:
                    problems.append(f"could not load key {f}: {e}")
            self._keys[files] = (pairs, problems)
        return self._keys[files]

    async def open(
        self, target: ConnectTarget, *, timeout: float | None = None
    ) -> asyncssh.SSHClientConnection:
        timeout = self.connect_timeout if timeout is None else timeout
        tunnel = None
        if target.jump is not None:
            jump = target.jump
            tunnel = await self.jumps.get(jump.endpoint, lambda: self.open(jump, timeout=timeout))
        pairs, key_problems = self._client_keys(target.key_files)
        kwargs: dict = {}
        if pairs and target.key_files:
            # Keys were named: use those only (no agent round trips, no reading
            # ~/.ssh/*.pub on every connect).
            kwargs.update(client_keys=pairs, agent_path=None, agent_identities=None)
        elif pairs:
            kwargs["client_keys"] = pairs  # ~/.ssh/id_* loaded once; the agent still helps
        if target.user:
            kwargs["username"] = target.user
        if target.host_key_alias:
            kwargs["host_key_alias"] = target.host_key_alias
        if target.proxy_command:
            kwargs["proxy_command"] = list(target.proxy_command)
        algs = self._host_key_algs(target)
        if algs:
            kwargs["server_host_key_algs"] = algs
        check = HostKeyCheck(self.policy, target.name, self.on_host_key)
        async with self._handshakes:
            try:
                sock, left = None, timeout
                if self.predialed is not None and tunnel is None and not target.proxy_command:
                    began = time.monotonic()
                    sock = await self.predialed.take(target.host, target.port, timeout)
                    left = max(0.001, timeout - (time.monotonic() - began))  # one timeout in all
                # with our keys given, building the options reads no file: they are
                # built on the loop, not in a worker thread (direct_connect.py)
                connect = direct_connect.connect if "client_keys" in kwargs else asyncssh.connect
                conn = await connect(
                    target.host,
                    target.port,
                    sock=sock,
                    tunnel=tunnel,
                    options=self._base,
                    config=[],
                    client_factory=lambda: _Client(check, self.first_contact),
                    known_hosts=check.known_hosts,
                    connect_timeout=left,
                    login_timeout=left,
                    **kwargs,
                )
            except (TimeoutError, asyncssh.Error, OSError, ValueError) as e:
                self.first_contact.set()
                failure = _failure(e, target, check, timeout, key_problems)
                if failure.timed_out or failure.transient:
                    self._handshakes.congestion()
                raise failure from None
            self._handshakes.success()
        check.connected(conn.get_server_host_key())
        return conn

    def _host_key_algs(self, target: ConnectTarget) -> list[str] | None:
        """The known key types first, then every other: asyncssh alone offers only
        the known types, so a host that has another kind of key closes the
        handshake and the real cause (a key of another type) is never seen."""
        known, ca, _ = self.policy.lookup(target.host_key_alias or target.host, target.host, target.port)
        if not known and not ca:
            return None
        first = [a for k, _ in known for a in k.sig_algorithms]
        certs = list(get_default_certificate_algs())
        rest = [*certs, *get_default_public_key_algs()] if ca else [*get_default_public_key_algs(), *certs]
        return list(dict.fromkeys(a.decode() for a in [*first, *rest]))

    async def close(self) -> None:
        if self.predialed is not None:
            self.predialed.close()  # the ones no connect took
        await self.jumps.close()


def _failure(
    e: BaseException, target: ConnectTarget, check: HostKeyCheck, timeout: float, key_problems: list[str]
) -> ConnectFailed:
    via = f" (via {target.jump.name})" if target.jump else ""
    if isinstance(e, asyncssh.HostKeyNotVerifiable):
        return ConnectFailed(f"host key refused: {check.refusal or check.explain(e.reason)}")
    if isinstance(e, asyncssh.PermissionDenied):
        who = f"{target.user}@{target.host}" if target.user else target.host
        extra = f" ({'; '.join(key_problems)})" if key_problems else ""
        return ConnectFailed(f"auth refused: {who} accepted none of our keys{extra}")
    if isinstance(e, asyncssh.KeyExchangeFailed) and check.known:
        algs = ", ".join(sorted({k.algorithm.decode() for k, _ in check.known}))
        return ConnectFailed(
            f"host key refused: {target.name} no longer offers a host key of the "
            f"known type ({algs}); if the node was reinstalled, remove the old "
            f"key from {check.known[0][1]}"
        )
    if isinstance(e, asyncio.TimeoutError):
        return ConnectFailed(f"unreachable: connect timeout after {timeout:g}s{via}", timed_out=True)
    if isinstance(e, ConnectionRefusedError):
        return ConnectFailed(f"unreachable: connection refused{via}")
    if isinstance(e, socket.gaierror):
        return ConnectFailed(f"unreachable: cannot resolve {target.host}{via}")
    if isinstance(
        e, (asyncssh.ConnectionLost, ConnectionResetError, BrokenPipeError, asyncio.IncompleteReadError)
    ):
        # sshd drops handshakes beyond MaxStartups like this: worth one retry.
        return ConnectFailed(f"unreachable: connection closed during handshake{via}", transient=True)
    if isinstance(e, asyncssh.ChannelOpenError):  # the jump host could not reach the target
        return ConnectFailed(f"unreachable: {e.reason}{via}")
    if isinstance(e, asyncssh.DisconnectError):
        return ConnectFailed(f"unreachable: {e.reason}{via}")
    if isinstance(e, OSError):
        return ConnectFailed(f"unreachable: {(e.strerror or str(e)).lower()}{via}")
    return ConnectFailed(f"unreachable: {e}{via}")
