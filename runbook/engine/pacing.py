"""Starting one task per host without stalling the event loop.

Creating 1,000 tasks at once puts all their first steps (open an SSH channel,
send the exec request) in one turn of the event loop: half a second or more
during which nothing else on the loop runs (a TUI on the same loop handles no
key and draws no frame). Started a few dozen per turn, the same work is spread
over many short turns, and the answers (and so the ends) come back spread too.
The total time barely changes: a turn of the loop costs microseconds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, TypeVar

T = TypeVar("T")
Item = TypeVar("Item")

# Task starts per turn of the loop: 32 channel opens take ~15 ms of the loop on
# this machine's cores (bench/tui_latency.py measures the stalls).
START_PER_TURN = 32


async def start_paced(
    make: Callable[[Item], Coroutine[Any, Any, T]], items: Iterable[Item], per_turn: int = START_PER_TURN
) -> list[asyncio.Task[T]]:
    """One task per item, `per_turn` of them created per turn of the loop (the
    ones created so far run meanwhile). Cancelled midway: the tasks created so far
    are cancelled too."""
    tasks: list[asyncio.Task[T]] = []
    try:
        for i, item in enumerate(items):
            if i and i % per_turn == 0:
                await asyncio.sleep(0)
            tasks.append(asyncio.create_task(make(item)))
    except asyncio.CancelledError:
        for t in tasks:
            t.cancel()
        raise
    return tasks
