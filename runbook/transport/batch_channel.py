"""One exec channel running a BatchScript (batch_script.py): each command's
result is handed over as soon as both its markers have arrived, and each
command keeps its own timeout, counted from when the one before it finished
(from before the channel was opened, for the first). A command that outlives
its timeout ends the channel exactly as a lone command's timeout does
(session.py `_timed_out`: SIGKILL, close, the connection on probation); a
connection lost mid-command is reported for the command in flight. Anything
else that stops the script early (a marker out of place, the output cap, the
script's shell ending without them) leaves the unfinished commands to the
caller, to run alone, as if never run: they are read-only."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

import asyncssh
from asyncssh.constants import EXTENDED_DATA_STDERR

from .batch_script import SIGNALLED, BatchScript
from .session import LOST_MID_COMMAND, Outcome, _timed_out

_CLOSE_GRACE = 5.0  # after the last marker, how long the script has to end its channel

Finished = Callable[[int, str, str, int, float, float], None]  # i, stdout, stderr, status, started, ended


class _BatchSession(asyncssh.SSHClientSession):
    def __init__(self, script: BatchScript, cap: int, wake: Callable[[], None]):
        self.script = script
        self.cap = cap
        self.wake = wake
        self.opened = False
        self.closed = False
        self.over_cap = False
        self.lost: Exception | None = None
        self.current = 0  # the command in flight (for output() after a timeout)

    def connection_made(self, chan) -> None:
        self.opened = True

    def data_received(self, data: bytes, datatype) -> None:
        if self.over_cap:
            return
        self.script.feed(1 if datatype == EXTENDED_DATA_STDERR else 0, data)
        if self.script.kept() > self.cap:
            self.over_cap = True
        self.wake()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.lost = exc
        self.wake()

    def output(self) -> tuple[str, str]:
        return self.script.partial(self.current)


@dataclass
class BatchEnd:
    """How a batch of commands on one channel ended."""

    finished: int  # commands 0 .. finished-1 were handed over (Finished)
    # The command `finished`'s own end when the channel ended it: a timeout (its
    # `probe` set) or the connection lost mid-command. None: the commands from
    # `finished` on are the caller's to run alone, as if never run.
    in_flight: Outcome | None = None
    conn_lost: bool = False  # the connection is gone: the pool must not reuse it
    complete: bool = False  # every command finished and the channel ended cleanly


async def execute_batch(
    conn: asyncssh.SSHClientConnection,
    script: BatchScript,
    timeouts: list[float],
    *,
    cap: int,
    on_begin: Callable[[int], None],
    on_finished: Finished,
) -> BatchEnd:
    loop = asyncio.get_running_loop()
    wake = asyncio.Event()
    s = _BatchSession(script, cap, wake.set)
    n = len(script.commands)
    chan = None
    i = 0
    began = time.time()
    deadline = loop.time() + timeouts[0]
    on_begin(0)
    try:
        async with asyncio.timeout_at(deadline):
            chan, _ = await conn.create_session(lambda: s, script.text, encoding=None, request_pty=False)
        while True:
            while i < script.done:
                ended = time.time()
                stdout, stderr, status = script.result(i)
                if status > SIGNALLED:  # killed by a signal, or said so: run it alone
                    chan.close()
                    return BatchEnd(i)
                on_finished(i, stdout, stderr, status, began, ended)
                i += 1
                if i == n:
                    return await _ended(s, chan)
                began, s.current = ended, i
                deadline = loop.time() + timeouts[i]
                on_begin(i)
            if s.closed:
                if s.lost is not None or conn.is_closed():
                    return BatchEnd(
                        i, Outcome(None, *s.output(), LOST_MID_COMMAND, True, conn_lost=True), True
                    )
                return BatchEnd(i)  # the script's shell ended without its markers
            if script.broken or s.over_cap:
                chan.close()
                return BatchEnd(i)
            wake.clear()
            async with asyncio.timeout_at(deadline):
                await wake.wait()
    except TimeoutError:
        return BatchEnd(i, _timed_out(conn, s, chan, timeouts[i]))
    except asyncssh.ChannelOpenError:
        return BatchEnd(0, conn_lost=conn.is_closed())  # refused before anything ran
    except (asyncssh.Error, OSError):
        if s.opened:
            return BatchEnd(i, Outcome(None, *s.output(), LOST_MID_COMMAND, True, conn_lost=True), True)
        return BatchEnd(0, conn_lost=True)
    except asyncio.CancelledError:
        if chan is not None:
            chan.close()
        raise


async def _ended(s: _BatchSession, chan) -> BatchEnd:
    """Every command is in: let the script's shell end its channel (it exits right
    after the last marker), so the next command on the host does not overlap it."""
    if not s.closed:
        try:
            await asyncio.wait_for(chan.wait_closed(), _CLOSE_GRACE)
        except TimeoutError:
            chan.close()
    return BatchEnd(len(s.script.commands), complete=True)
