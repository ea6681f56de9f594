"""The engine's own loop in a thread (workspace/engine_thread.py): results and
errors come back to the caller's loop, a cancelled caller waits for the
engine's clean-up, batches come back in order on the caller's thread."""

from __future__ import annotations

import asyncio
import threading

import pytest

from runbook.workspace.engine_thread import EngineThread, ToLoop, confirm_on


@pytest.fixture
def engine():
    thread = EngineThread()
    yield thread
    thread.stop()


async def test_the_coroutine_runs_on_the_engine_thread_and_its_result_comes_back(engine):
    async def where() -> str:
        await asyncio.sleep(0)
        return threading.current_thread().name

    assert await engine.run(where()) == "runbook-engine"


async def test_an_error_there_is_raised_here(engine):
    async def fails() -> None:
        raise ValueError("from the engine")

    with pytest.raises(ValueError, match="from the engine"):
        await engine.run(fails())


async def test_a_cancelled_caller_returns_only_once_the_engine_has_cleaned_up(engine):
    started, cleaned = threading.Event(), []

    async def long_run() -> None:
        started.set()
        try:
            await asyncio.sleep(60)
        finally:
            await asyncio.sleep(0.05)  # the engine's own clean-up takes a while (awaits)
            cleaned.append(threading.current_thread().name)

    caller = asyncio.create_task(engine.run(long_run()))
    while not started.is_set():
        await asyncio.sleep(0.01)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert cleaned == ["runbook-engine"]


async def test_batches_come_back_in_order_on_the_callers_thread(engine):
    seen: list[tuple[int, str]] = []
    relay = ToLoop(
        asyncio.get_running_loop(), lambda b: seen.extend((x, threading.current_thread().name) for x in b)
    )

    async def emit() -> None:
        for i in range(50):
            relay([i])
            if i % 7 == 0:
                await asyncio.sleep(0)

    await engine.run(emit())
    await asyncio.sleep(0)  # the last hand-over was queued before the result: it has run
    assert [x for x, _ in seen] == list(range(50))
    assert {name for _, name in seen} == {threading.current_thread().name}


async def test_an_error_in_the_callers_handler_is_kept_not_lost(engine):
    def handler(batch):
        raise RuntimeError("the UI failed")

    relay = ToLoop(asyncio.get_running_loop(), handler)

    async def emit() -> None:
        relay([1])

    await engine.run(emit())
    await asyncio.sleep(0)
    assert isinstance(relay.error, RuntimeError)


async def test_confirm_is_asked_on_the_callers_loop_and_a_stop_withdraws_it(engine):
    here = threading.current_thread().name
    asked, withdrawn = [], asyncio.Event()

    async def ask(step, action):
        asked.append((step, action, threading.current_thread().name))
        try:
            await asyncio.sleep(60)  # nobody answers
        except asyncio.CancelledError:
            withdrawn.set()
            raise
        return True

    async def run_that_asks() -> bool:
        return await confirm_on(caller_loop, ask)("s1", "apply")

    caller_loop = asyncio.get_running_loop()
    caller = asyncio.create_task(engine.run(run_that_asks()))
    while not asked:
        await asyncio.sleep(0.01)
    assert asked == [("s1", "apply", here)]
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    await asyncio.wait_for(withdrawn.wait(), 5)


async def test_close_stops_a_run_left_going_before_the_last_word():
    thread = EngineThread()
    order: list[str] = []
    started = threading.Event()

    async def left_going() -> None:
        started.set()
        try:
            await asyncio.sleep(60)
        finally:
            await asyncio.sleep(0.05)
            order.append("run recorded")

    async def close_connections() -> None:
        order.append("connections closed")

    abandoned = asyncio.create_task(thread.run(left_going()))
    while not started.is_set():
        await asyncio.sleep(0.01)
    await thread.close(close_connections())
    assert order == ["run recorded", "connections closed"]
    assert not thread.alive
    with pytest.raises(asyncio.CancelledError):
        await abandoned


async def test_stop_ends_the_thread():
    thread = EngineThread()
    assert thread.alive
    thread.stop()
    assert not thread.alive

    async def never() -> None:
        pass

    with pytest.raises(RuntimeError):
        await thread.run(never())
