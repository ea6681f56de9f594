"""The adaptive concurrency limit (transport/adaptive.py): cut to half of what
was in flight when overload shows, never below its floor, deaf to a lone
failure, grown back by successes, and no waiter is left behind."""

from __future__ import annotations

import asyncio

from runbook.transport.adaptive import AdaptiveLimit


async def hold(limit: AdaptiveLimit, n: int) -> None:
    for _ in range(n):
        await limit.acquire()


async def test_a_crowd_of_failures_halves_what_was_in_flight():
    limit = AdaptiveLimit(100_000, floor=8, cooldown=0)
    await hold(limit, 200)
    limit.congestion()
    assert limit.limit == 100  # half of the 200 in flight, not half of the ceiling
    assert limit.cuts == 1


async def test_it_never_drops_below_the_floor():
    limit = AdaptiveLimit(64, floor=8, cooldown=0)
    await hold(limit, 64)
    for _ in range(20):
        limit.congestion()
    assert limit.limit == 8


async def test_a_lone_failure_cuts_nothing():
    # one hung or dead host at the end of a step: fewer than the floor in flight
    limit = AdaptiveLimit(64, floor=8, cooldown=0)
    await hold(limit, 1)
    limit.congestion()
    assert limit.limit == 64 and limit.cuts == 0


async def test_one_burst_counts_once_within_the_cooldown():
    limit = AdaptiveLimit(64, floor=4, cooldown=60)
    await hold(limit, 64)
    for _ in range(10):
        limit.congestion()
    assert limit.limit == 32 and limit.cuts == 1


async def test_successes_grow_it_back_and_wake_waiters():
    limit = AdaptiveLimit(16, floor=2, cooldown=0)
    await hold(limit, 16)
    limit.congestion()
    assert limit.limit == 8
    for _ in range(16):
        limit.release()
    await hold(limit, 8)
    waiter = asyncio.ensure_future(limit.acquire())
    await asyncio.sleep(0)
    assert not waiter.done()  # the ninth waits at a limit of 8
    for _ in range(9):
        limit.success()  # about one per round: 1/limit each, 9 successes at 8 grow it by one
    await asyncio.sleep(0)
    assert limit.limit == 9 and waiter.done()


async def test_every_waiter_is_served_at_the_floor():
    limit = AdaptiveLimit(64, floor=2, cooldown=0)
    await hold(limit, 64)
    limit.congestion()
    for _ in range(5):
        limit.congestion()
    for _ in range(64):
        limit.release()
    assert limit.limit == 2
    done: list[int] = []

    async def work(i: int) -> None:
        async with limit:
            await asyncio.sleep(0)
            done.append(i)

    await asyncio.wait_for(asyncio.gather(*(work(i) for i in range(50))), 5)
    assert sorted(done) == list(range(50)) and limit.in_use == 0


async def test_a_cancelled_waiter_gives_its_place_back():
    limit = AdaptiveLimit(1, floor=1)
    await limit.acquire()
    w1 = asyncio.ensure_future(limit.acquire())
    w2 = asyncio.ensure_future(limit.acquire())
    await asyncio.sleep(0)
    w1.cancel()
    await asyncio.sleep(0)
    limit.release()
    await asyncio.wait_for(w2, 1)
    assert limit.in_use == 1
