"""Engine._settle: a wait for the events emitted so far to be taken by the
consumer (durable) ends once they are, and not before; a batch taken wakes
only the waits it satisfies (runner.py)."""

from __future__ import annotations

import asyncio

from runbook.engine.runner import Engine
from runbook.run.events import HostStarted
from runbook.run.state import RunState

from .fakes import FakeHost, FakeTransport
from .test_runner import world  # noqa: F401  (the two-step runbook and its inventory)


async def test_each_wait_ends_once_its_events_are_taken(world):
    rb, inv, _hosts = world
    engine = Engine(rb, inv, FakeTransport({h: FakeHost() for h in inv.hosts}), RunState())
    await engine._settle()  # nothing emitted: nothing to wait for
    events = [HostStarted("ofed", "verify", f"n{i}", "ofed_info -s") for i in range(1, 4)]
    engine._emit(events[0])
    first = asyncio.create_task(engine._settle())
    await asyncio.sleep(0)  # waiting for the one event emitted so far
    engine._emit(events[1])
    engine._emit(events[2])
    second = asyncio.create_task(engine._settle())
    gone = asyncio.create_task(engine._settle())
    await asyncio.sleep(0)  # both waiting for all three
    gone.cancel()
    await asyncio.sleep(0)
    assert not first.done() and not second.done()
    engine._taken_by_consumer(events[:2])  # covers the first wait only
    await asyncio.sleep(0)
    assert first.done() and not second.done()
    engine._taken_by_consumer(events[2:])
    await asyncio.sleep(0)
    assert second.done() and gone.cancelled()
    assert engine._settling == []
