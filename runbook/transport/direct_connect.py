"""asyncssh.connect with the connection's options built on the event loop, not in
a worker thread.

asyncssh.connect builds every connection's SSHClientConnectionOptions in the
loop's default executor (asyncssh/connection.py `SSHConnectionOptions.construct`),
because building them may read files: an ssh_config, key files, known_hosts
paths. connect.py's connections read none: `config=[]`, keys loaded once, our
host-key check a callable, no x509 paths. Building their options takes ~0.1 ms;
the trip through the executor costs more than that in thread wake-ups and GIL
hand-overs, and on a cold 48-node run its up to five threads compete with the
handshakes (bench/README.md, "Session 10").

So `connect()` here does what asyncssh.connect does, in the same order, with the
options built in place. It needs asyncssh's private `_connect` with the parameters
below (pyproject allows any asyncssh >= 2.24): an asyncssh without it gets
asyncssh.connect, unchanged. A caller that would make asyncssh read files (no
`client_keys` given) must use asyncssh.connect itself (connect.py does)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import asyncssh
from asyncssh import connection as _conn

_PARAMS = ("options", "config", "loop", "flags", "sock", "conn_factory", "msg")


def _has_private_connect() -> bool:
    fn = getattr(_conn, "_connect", None)
    if not callable(fn) or not inspect.iscoroutinefunction(fn):
        return False
    try:
        return tuple(inspect.signature(fn).parameters) == _PARAMS
    except (TypeError, ValueError):
        return False


AVAILABLE = _has_private_connect()


async def connect(
    host: str,
    port: int,
    *,
    options: asyncssh.SSHClientConnectionOptions,
    sock=None,
    tunnel: Any = (),
    config: Any = (),
    **kwargs: Any,
) -> asyncssh.SSHClientConnection:
    """asyncssh.connect(host, port, sock=, tunnel=, config=, options=, **kwargs)."""
    if not AVAILABLE:
        return await asyncssh.connect(
            host, port, sock=sock, tunnel=tunnel, config=config, options=options, **kwargs
        )
    loop = asyncio.get_running_loop()
    new_options = asyncssh.SSHClientConnectionOptions(
        options,
        loop=loop,
        config=config,
        host=host,
        port=port,
        tunnel=tunnel,
        family=(),
        local_addr=(),
        **kwargs,
    )

    def conn_factory() -> asyncssh.SSHClientConnection:
        return asyncssh.SSHClientConnection(loop, new_options, wait="auth")

    return await asyncio.wait_for(
        _conn._connect(new_options, config, loop, 0, sock, conn_factory, "Opening SSH connection to"),
        timeout=new_options.connect_timeout,
    )
