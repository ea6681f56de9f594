"""Hosts are started a few per turn of the event loop, so that 1,000 hosts starting
together leave the loop free for others (a TUI's keys and frames) between turns."""

import asyncio
from collections import Counter

import pytest

from runbook.engine.pacing import start_paced


class Turns:
    """Counts the turns of the event loop (one sleep(0) per turn)."""

    def __init__(self):
        self.turn = 0
        self._task = asyncio.get_running_loop().create_task(self._tick())

    async def _tick(self):
        while True:
            await asyncio.sleep(0)
            self.turn += 1

    def stop(self):
        self._task.cancel()


async def test_at_most_per_turn_hosts_start_in_one_turn_and_all_run():
    turns = Turns()
    started: dict[int, int] = {}

    async def one(i: int) -> int:
        started[i] = turns.turn
        await asyncio.sleep(0)
        return i * 2

    tasks = await start_paced(one, range(100), per_turn=8)
    results = await asyncio.gather(*tasks)
    turns.stop()
    assert results == [i * 2 for i in range(100)]  # every host, in order
    per_turn = Counter(started.values())
    assert max(per_turn.values()) <= 8
    assert len(per_turn) >= 100 // 8  # spread over at least ceil(100/8) - 1 turns


async def test_a_cancelled_start_cancels_the_hosts_already_started():
    created: list[asyncio.Task] = []
    gate = asyncio.Event()

    async def one(i: int) -> None:
        created.append(asyncio.current_task())
        await gate.wait()

    starter = asyncio.create_task(start_paced(one, range(100), per_turn=10))
    while len(created) < 20:
        await asyncio.sleep(0)
    starter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await starter
    await asyncio.sleep(0)
    assert 20 <= len(created) < 100  # stopped midway
    assert all(t.cancelled() for t in created)  # none left waiting behind the stop
