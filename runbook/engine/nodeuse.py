"""Who may use a host beside the step it is walking (engine/scheduler.py).

A pipelined host runs one step at a time. A read-only fleet sweep (`run_on:
one` in a pipelined segment) runs its command on one host of the fleet while
that host walks its own steps: the two only read (the node's files, its
port's state, the fabric through it). A step marked `exclusive: node` is
promised its host to itself (docs/steps.md, "Steps side by side"), so the
sweep's command and such a step never run on one host at once: whichever
comes second waits for the other to end there.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class NodeUse:
    def __init__(self) -> None:
        self._sweeps: dict[str, int] = {}  # host -> sweep commands running on it
        self._alone: set[str] = set()  # hosts in an `exclusive: node` step
        self._changed = asyncio.Condition()

    @asynccontextmanager
    async def sweep(self, host: str) -> AsyncIterator[None]:
        """A sweep's command on `host` (several sweeps may share it)."""
        async with self._changed:
            await self._changed.wait_for(lambda: host not in self._alone)
            self._sweeps[host] = self._sweeps.get(host, 0) + 1
        try:
            yield
        finally:
            await self._release(lambda: self._drop_sweep(host))

    @asynccontextmanager
    async def alone(self, host: str) -> AsyncIterator[None]:
        """An `exclusive: node` step on `host`: no sweep runs there meanwhile."""
        if not self._sweeps.get(host):  # the usual case: no wait, no lock
            self._alone.add(host)
        else:
            async with self._changed:
                await self._changed.wait_for(lambda: not self._sweeps.get(host))
                self._alone.add(host)
        try:
            yield
        finally:
            await self._release(lambda: self._alone.discard(host))

    def _drop_sweep(self, host: str) -> None:
        left = self._sweeps.get(host, 0) - 1
        if left > 0:
            self._sweeps[host] = left
        else:
            self._sweeps.pop(host, None)

    async def _release(self, change) -> None:
        change()  # before any await: a run cancelled here leaves no host held
        async with self._changed:
            self._changed.notify_all()
