"""An event loop of its own, in a thread, for a session's engine and SSH
transport, so that a client's event loop (the TUI's) only handles keys and
draws while 1,000 hosts answer.

On one loop, each turn of it ran every SSH packet that had arrived, the
engine's work on them and the store's bookkeeping before the next key:
100-200 ms while 1,000 hosts started or finished together (issue 18, goal 3:
bench/tui_latency.py, bench/README.md). Here the engine's loop turns in its
own thread; the interpreter switches threads every few milliseconds (its
switch interval), so a key waits for that, not for a whole turn.

    thread = EngineThread()
    result = await thread.run(coro)      # from the client's loop
    relay = ToLoop(loop, on_events)      # batches back to the client's loop
    await thread.close(transport.close())  # a run left going stopped first

Plain asyncio and threading: the core never imports textual.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class EngineThread:
    """One asyncio loop running in a daemon thread until stop()."""

    def __init__(self, name: str = "runbook-engine"):
        self.loop = asyncio.new_event_loop()
        self._runs: set[asyncio.Task] = set()  # what run() started and is not over (engine loop only)
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            try:  # what is left (nothing, after a clean close) is cancelled, then the loop closed
                left = asyncio.all_tasks(self.loop)
                for task in left:
                    task.cancel()
                if left:
                    self.loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
                self.loop.run_until_complete(self.loop.shutdown_default_executor())
            finally:
                self.loop.close()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the engine's loop and await it from the caller's loop.
        Cancelling the caller cancels it there and waits until it has ended (its
        own clean-up: the engine records the in-flight commands as interrupted)
        before the cancellation goes on, so a stopped run is on disk whole."""
        if not self.alive:
            coro.close()
            raise RuntimeError("the engine thread has stopped")
        result: concurrent.futures.Future = concurrent.futures.Future()
        tasks: list[asyncio.Task] = []

        def start() -> None:
            task = self.loop.create_task(coro)
            tasks.append(task)
            self._runs.add(task)
            task.add_done_callback(self._runs.discard)
            task.add_done_callback(lambda t: _copy_outcome(t, result))

        def cancel() -> None:  # runs after start(): the loop runs its callbacks in order
            for task in tasks:
                task.cancel()

        self.loop.call_soon_threadsafe(start)
        waiter = asyncio.wrap_future(result)
        try:
            return await asyncio.shield(waiter)
        except asyncio.CancelledError:
            if not waiter.done():
                self.loop.call_soon_threadsafe(cancel)
                try:
                    await waiter  # its end, whatever it is; a second cancel stops waiting
                except asyncio.CancelledError:
                    pass
                except Exception:
                    pass
            raise

    async def close(self, last: Coroutine[Any, Any, Any] | None = None) -> None:
        """Stop what run() started and still runs (a client that went away without
        waiting for its run), wait for its clean-up, then run `last` there (closing
        the connections that live on this loop), then end the thread."""

        if not self.alive:
            if last is not None:
                last.close()
            return

        async def wind_down() -> None:
            runs = [t for t in self._runs if t is not asyncio.current_task()]
            for task in runs:
                task.cancel()
            await asyncio.gather(*runs, return_exceptions=True)
            if last is not None:
                await last

        try:
            await self.run(wind_down())
        finally:
            self.stop()

    def stop(self, timeout: float = 10.0) -> None:
        """End the loop (after what it runs has been awaited) and the thread."""
        if self.alive:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout)


def _copy_outcome(task: asyncio.Task, result: concurrent.futures.Future) -> None:
    if result.done():  # the caller's loop gave up waiting (it was torn down)
        return
    if task.cancelled():
        result.cancel()
    elif task.exception() is not None:
        result.set_exception(task.exception())
    else:
        result.set_result(task.result())


class ToLoop:
    """Hands event batches from the engine's thread to `fn` on `loop`'s thread,
    in order. At most one hand-over is queued on that loop at a time: a busy
    client takes every batch waiting at once, not one callback per batch. An
    error `fn` raised is kept (`error`) for the caller to raise once the run is
    over: there is nobody on the engine's side to tell."""

    def __init__(self, loop: asyncio.AbstractEventLoop, fn: Callable[[list], Any]):
        self.loop = loop
        self.fn = fn
        self.error: BaseException | None = None
        self._waiting: list[list] = []
        self._lock = threading.Lock()
        self._queued = False

    def __call__(self, batch: list) -> None:
        with self._lock:
            self._waiting.append(batch)
            if self._queued:
                return
            self._queued = True
        self.loop.call_soon_threadsafe(self._hand_over)

    def _hand_over(self) -> None:
        with self._lock:
            batches, self._waiting = self._waiting, []
            self._queued = False
        for batch in batches:
            try:
                self.fn(batch)
            except Exception as exc:
                if self.error is None:
                    self.error = exc


def confirm_on(loop: asyncio.AbstractEventLoop, confirm: Callable[..., Any]) -> Callable[..., Any]:
    """The engine's confirm callback, asked on `loop` (where the client's dialog
    lives); cancelling the engine's wait cancels the question there."""

    async def ask(*args: Any) -> Any:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(confirm(*args), loop))

    return ask
