"""One open connection per key, opened once and reused.

Concurrent first uses of a key share one connect attempt (a task every caller
awaits through `shield`, so one caller being cancelled does not abort the
connect for the others). A connection found closed is dropped and reopened on
the next `get`. After a command timeout a connection can be put `on_probation`:
until the probe says whether it is still healthy, `get` waits for it instead
of opening a second connection."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

import asyncssh

K = TypeVar("K", bound=Hashable)
Conn = asyncssh.SSHClientConnection


class ConnectionPool(Generic[K]):
    def __init__(self) -> None:
        self._conns: dict[K, Conn] = {}
        self._pending: dict[K, asyncio.Task] = {}
        self._probation: dict[Conn, K] = {}
        self._background: set[asyncio.Task] = set()

    def peek(self, key: K) -> Conn | None:
        """The open connection for key, if there is one (no connecting)."""
        conn = self._conns.get(key)
        if conn is not None and conn.is_closed():
            del self._conns[key]
            return None
        return conn

    def has(self, key: K) -> bool:
        """An open connection for key, or one being opened."""
        return key in self._pending or self.peek(key) is not None

    async def get(self, key: K, opener: Callable[[], Awaitable[Conn]]) -> Conn:
        while True:
            conn = self._conns.get(key)  # fast path: the warm case is one dict lookup
            if conn is not None:
                if not conn.is_closed():
                    return conn
                del self._conns[key]
            task = self._pending.get(key)
            if task is None:
                task = self._start(key, self._open(key, opener))
            conn = await asyncio.shield(task)
            if conn is not None:
                return conn
            # a probation ended with the connection dropped: open a new one

    def _start(self, key: K, coro: Awaitable[Conn | None]) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        self._pending[key] = task

        def done(t: asyncio.Task) -> None:
            if self._pending.get(key) is t:
                del self._pending[key]
            if not t.cancelled():
                t.exception()  # retrieved here so a connect nobody awaits any more is not logged

        task.add_done_callback(done)
        return task

    async def _open(self, key: K, opener: Callable[[], Awaitable[Conn]]) -> Conn:
        conn = await opener()
        self._conns[key] = conn
        return conn

    def on_probation(self, key: K, conn: Conn, probe: Awaitable[bool]) -> None:
        """Take conn out of service until probe() says whether it is healthy;
        keep it if so, abort it otherwise."""
        if self._conns.get(key) is conn:
            del self._conns[key]
        self._probation[conn] = key
        probe_task = asyncio.ensure_future(probe)  # runs even if judge() is cancelled early
        self._background.add(probe_task)
        probe_task.add_done_callback(self._background.discard)

        async def judge() -> Conn | None:
            try:
                healthy = await probe_task
            except Exception:
                healthy = False
            finally:
                self._probation.pop(conn, None)
            if healthy and not conn.is_closed() and key not in self._conns:
                self._conns[key] = conn
                return conn
            conn.abort()
            return None

        if key in self._pending:  # someone is already reconnecting; just judge in the background
            task = asyncio.ensure_future(judge())
            self._background.add(task)
            task.add_done_callback(self._background.discard)
        else:
            self._start(key, judge())

    def discard(self, key: K, conn: Conn | None = None) -> None:
        """Forget and abort the connection for key (only if it is still `conn`,
        when given): after it was lost, or after sending a reboot (then one on
        probation goes too)."""
        if conn is None:
            for c, k in list(self._probation.items()):
                if k == key:
                    c.abort()
        current = self._conns.get(key)
        if current is not None and (conn is None or current is conn):
            del self._conns[key]
            current.abort()
        elif conn is not None:
            conn.abort()

    def keys(self) -> set[K]:
        return {k for k, c in self._conns.items() if not c.is_closed()}

    async def close(self) -> None:
        for task in [*self._pending.values(), *self._background]:
            task.cancel()
        conns = [*self._conns.values(), *self._probation]
        self._conns.clear()
        self._probation.clear()
        for c in conns:
            c.close()
        await asyncio.gather(*(c.wait_closed() for c in conns), return_exceptions=True)
