"""Read-only commands of one host in one round trip: `Transport.run_many`.

An exec channel costs both ends more than most verify commands do (open, exec
request, window, eof, exit-status, close: bench/README.md, "Goal 1, branch
batch"), so several verifies of one host that are ready together run as one
script (batch_script.py) in one channel (batch_channel.py), and each comes back
as the CommandResult its own channel would have given: its output, exit status,
timeout, start and end.

Only on a connection that is already open: the first command of a host that
has none runs alone (it connects, with every retry rule of `Transport.run`),
the others then share one channel (several, one after the other, if one
script would be too long). Whatever a channel leaves unfinished runs
alone, one after the other, as before: after a command's timeout (the
connection is then on probation, and the next command waits for its verdict,
as it would have), after a marker out of place, a signal, the output cap, or a
channel refused. The command in flight when the connection dropped goes on as
`run` would have gone on: its next attempt, after the same pause, noted.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
import time
from collections.abc import Callable

from .batch_channel import BatchEnd, execute_batch
from .batch_script import BatchScript
from .result import CommandResult
from .session import LOST_MID_COMMAND, OnLine, Outcome

log = logging.getLogger(__name__)

SCRIPT_LIMIT = 64 * 1024


def deliver_lines(on_line: OnLine | None, stream: str, text: str) -> BaseException | None:
    """A finished command's output to `on_line`, line by line, as the command's own
    channel would have streamed it (session.py _CommandSession._lines)."""
    if on_line is None or not text:
        return None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    try:
        for line in lines:
            on_line(stream, line[:-1] if line.endswith("\r") else line)
    except Exception as e:
        return e
    return None


async def run_many(
    transport,
    host: str,
    commands: list[tuple[str, float]],
    *,
    on_start: Callable[[int], None],
    on_result: Callable[[int, CommandResult], None],
    on_line_for: Callable[[int], OnLine | None] | None = None,
    retries: int = 0,
) -> None:
    n = len(commands)
    started: dict[int, float] = {}
    line_sink = on_line_for or (lambda _i: None)

    def begin(i: int) -> None:
        if i not in started:
            started[i] = time.time()
            on_start(i)

    i = 0
    stopped = False  # a batch ended early: what is left runs alone
    while i < n:
        take = 0 if stopped else _fitting(commands[i:])
        conn = transport._pool.peek(host) if take > 1 else None
        if conn is None:
            cmd, timeout = commands[i]
            begin(i)
            res = await transport.run(host, cmd, timeout=timeout, on_line=line_sink(i), retries=retries)
            res.started = started[i]
            on_result(i, res)
            i += 1
            continue
        end = await _batch(
            transport, conn, host, commands[i : i + take], i, begin, on_result, line_sink, retries
        )
        stopped = not end.complete
        i += end.finished
        if end.in_flight is not None:
            on_result(
                i,
                await _go_on(transport, host, commands[i], end.in_flight, started[i], line_sink(i), retries),
            )
            i += 1


def _fitting(commands: list[tuple[str, float]]) -> int:
    """How many of the commands, from the first, make a script of at most
    SCRIPT_LIMIT bytes: the script is one argument of the login shell, and
    Linux takes at most 128 KiB in one argument of execve (MAX_ARG_STRLEN)."""
    size = 0
    for k, (command, _) in enumerate(commands):
        size += len(shlex.quote(command).encode()) + 96  # + the command's marker lines
        if size > SCRIPT_LIMIT:
            return k
    return len(commands)


async def _batch(transport, conn, host, commands, first, begin, on_result, line_sink, retries) -> BatchEnd:
    script = BatchScript([c for c, _ in commands], transport.batch_token)

    def finished(k: int, stdout: str, stderr: str, status: int, began: float, ended: float) -> None:
        i = first + k
        on_line = line_sink(i)
        for stream, text in (("stdout", stdout), ("stderr", stderr)):
            error = deliver_lines(on_line, stream, text)
            if error is not None:
                log.warning("on_line callback for %s failed: %r", host, error)
                on_line = None
        on_result(i, CommandResult(host, commands[k][0], status, stdout, stderr, began, ended, None, True, 1))

    async def run() -> BatchEnd:
        return await execute_batch(
            conn,
            script,
            [t for _, t in commands],
            cap=transport.output_cap,
            on_begin=lambda k: begin(first + k),
            on_finished=finished,
        )

    if retries:  # counted as one read-only command in flight (transport.py `_commands`)
        async with transport._commands:
            end = await run()
            flight = end.in_flight
            if flight is not None and (flight.reason == LOST_MID_COMMAND or flight.probe is not None):
                transport._commands.congestion()
            elif end.complete:
                transport._commands.success()
    else:
        end = await run()
    flight = end.in_flight
    if end.conn_lost or (flight is not None and flight.conn_lost):
        transport._pool.discard(host, conn)
    elif flight is not None and flight.probe is not None:
        transport._pool.on_probation(host, conn, flight.probe)
    return end


async def _go_on(
    transport, host, command: tuple[str, float], o: Outcome, started: float, on_line, retries
) -> CommandResult:
    """The command the channel ended: its timeout as is; a connection lost under it
    goes on to its next attempt, as `Transport.run` would have (transport.py
    `_attempts`), or is the answer when no retry is allowed."""
    from .transport import _backoff, _noted

    command, timeout = command
    attempts = 1
    if o.reason == LOST_MID_COMMAND and retries:
        said = [f"attempt 1: {o.reason}"]
        await asyncio.sleep(_backoff(1))
        o, attempts = await transport._attempts(
            host, command, timeout, on_line, retries, notes=said, attempts=1
        )
    else:
        deliver_lines(on_line, "stdout", o.stdout)
        deliver_lines(on_line, "stderr", o.stderr)
        o = _noted(o, [])
    return transport._result(host, command, o, attempts, started)
