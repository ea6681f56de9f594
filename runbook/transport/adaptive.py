"""A concurrency limit that adapts (AIMD, as TCP's congestion window does):
when the other side shows it is overloaded (a handshake or a command timed
out, a connection dropped) the limit becomes half of what was in flight then,
and it grows back by about one per round of successes. Cuts closer together
than `cooldown` seconds count once, so one burst of failures from the same
overload does not collapse the limit. A failure while fewer than `floor` are in
flight says nothing about load (one hung or dead host, at the end of a step)
and cuts nothing. The limit never goes below `floor` (>= 1): it cannot starve.

    limit = AdaptiveLimit(64, floor=4)
    async with limit:          # waits while `limit.in_use >= limit.limit`
        ...
    limit.success() / limit.congestion()
"""

from __future__ import annotations

import asyncio
import math
from collections import deque


class AdaptiveLimit:
    def __init__(self, ceiling: int, *, floor: int = 1, cooldown: float = 1.0):
        self.ceiling = max(1, int(ceiling))
        self.floor = max(1, min(int(floor), self.ceiling))
        self.cooldown = cooldown
        self._limit = float(self.ceiling)
        self.in_use = 0
        self.cuts = 0  # how many times it was halved (diagnostics, bench)
        self._waiters: deque[asyncio.Future] = deque()
        self._last_cut = -math.inf

    @property
    def limit(self) -> int:
        return max(self.floor, int(self._limit))

    async def acquire(self) -> None:
        if self.in_use < self.limit and not self._waiters:
            self.in_use += 1
            return
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release()  # granted just as we were cancelled: give it back
            else:
                try:
                    self._waiters.remove(fut)
                except ValueError:
                    pass
            raise

    def release(self) -> None:
        self.in_use -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_use < self.limit:
            fut = self._waiters.popleft()
            if not fut.done():
                self.in_use += 1
                fut.set_result(None)

    def success(self) -> None:
        if self._limit < self.ceiling:
            self._limit = min(float(self.ceiling), self._limit + 1.0 / max(self._limit, 1.0))
            self._wake()

    def congestion(self) -> None:
        """Called by a holder (inside `async with`) whose try showed overload."""
        in_flight = max(self.in_use, 1)
        if in_flight < self.floor:
            return  # too few at once to be load: one bad host, not a crowd
        now = asyncio.get_running_loop().time()
        if now - self._last_cut < self.cooldown:
            return
        cut = max(float(self.floor), min(self._limit, float(in_flight)) / 2)
        if cut >= self._limit:
            return
        self._last_cut = now
        self.cuts += 1
        self._limit = cut

    async def __aenter__(self) -> AdaptiveLimit:
        await self.acquire()
        return self

    async def __aexit__(self, *exc) -> None:
        self.release()
