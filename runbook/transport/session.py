"""Running one command on an open connection, streaming its output by line.

A bare SSHClientSession (bytes in, our own incremental UTF-8 decoding) costs
less per command than asyncssh's `conn.run()` process/stream machinery, and it
lets `on_line` see each complete line as it arrives."""

from __future__ import annotations

import asyncio
import codecs
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import asyncssh
from asyncssh.constants import EXTENDED_DATA_STDERR

from .quiet_log import skip_unwanted_messages

skip_unwanted_messages()  # asyncssh's per-packet log messages, built only when wanted

OnLine = Callable[[str, str], None]  # (stream "stdout"|"stderr", line without newline)

OUTPUT_CAP = 8 * 1024 * 1024  # bytes kept per command (stdout + stderr)
PROBE_GRACE = 5.0  # after a timeout, how long the server has to answer a keepalive
_STREAMS = ("stdout", "stderr")
LOST_MID_COMMAND = "connection lost mid-command"
_Utf8Decoder = codecs.getincrementaldecoder("utf-8")
TIMEOUT_PREFIX = "timeout after "  # a command that outlived its timeout: "timeout after 30s"


class _CommandSession(asyncssh.SSHClientSession):
    def __init__(self, on_line: OnLine | None, cap: int, done: asyncio.Future):
        self._on_line = on_line
        self._cap = cap
        self._done = done
        self._dec: list = [None, None]  # made on a stream's first bytes (stderr seldom has any)
        self._parts: tuple[list[str], list[str]] = ([], [])
        self._partial = ["", ""]
        self.kept = 0
        self.dropped = 0
        self.opened = False  # channel confirmed: the exec request follows at once
        self.closed = False
        self.exit_status: int | None = None
        self.exit_signal: str | None = None
        self.lost: Exception | None = None
        self.callback_error: BaseException | None = None

    def connection_made(self, chan) -> None:
        self.opened = True

    def data_received(self, data: bytes, datatype) -> None:
        n = len(data)
        room = self._cap - self.kept
        if n > room:
            self.dropped += n - max(room, 0)
            if room <= 0:
                return
            data, n = data[:room], room
        self.kept += n
        i = 1 if datatype == EXTENDED_DATA_STDERR else 0
        dec = self._dec[i]
        if dec is None:
            dec = self._dec[i] = _Utf8Decoder("replace")
        text = dec.decode(data)
        if text:
            self._parts[i].append(text)
            if self._on_line is not None:
                self._lines(i, text)

    def _lines(self, i: int, text: str, final: bool = False) -> None:
        buf = self._partial[i] + text
        if "\n" not in text and not final:
            self._partial[i] = buf
            return
        lines = buf.split("\n")
        self._partial[i] = "" if final else lines.pop()
        if final and lines[-1] == "":
            lines.pop()
        try:
            for line in lines:
                self._on_line(_STREAMS[i], line[:-1] if line.endswith("\r") else line)
        except Exception as e:
            self.callback_error = e
            self._on_line = None

    def exit_status_received(self, status: int) -> None:
        self.exit_status = status

    def exit_signal_received(self, signal: str, core_dumped: bool, msg: str, lang: str) -> None:
        self.exit_signal = signal

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.lost = exc
        for i in (0, 1):
            dec = self._dec[i]
            tail = dec.decode(b"", final=True) if dec is not None else ""
            if tail:
                self._parts[i].append(tail)
            if self._on_line is not None and (tail or self._partial[i]):
                self._lines(i, tail, final=True)
        if not self._done.done():
            self._done.set_result(None)

    def output(self) -> tuple[str, str]:
        out, err = "".join(self._parts[0]), "".join(self._parts[1])
        if self.dropped:
            err += (
                f"\n[runbook: output truncated: kept the first {self._cap} bytes, "
                f"dropped {self.dropped} more]\n"
            )
        return out, err


@dataclass
class Outcome:
    """How one command on an open connection ended."""

    exit_status: int | None
    stdout: str
    stderr: str
    reason: str | None  # None: ran to completion
    started_remote: bool
    retry_ok: bool = False  # never started, and trying again may help
    conn_lost: bool = False  # the connection is gone: the pool must not reuse it
    probe: Awaitable[bool] | None = None  # set after a timeout: is the connection still healthy?
    callback_error: BaseException | None = None


async def execute(
    conn: asyncssh.SSHClientConnection,
    command: str,
    *,
    timeout: float,
    on_line: OnLine | None = None,
    cap: int = OUTPUT_CAP,
) -> Outcome:
    done = asyncio.get_running_loop().create_future()
    s = _CommandSession(on_line, cap, done)
    chan = None
    try:
        async with asyncio.timeout(timeout):
            chan, _ = await conn.create_session(lambda: s, command, encoding=None, request_pty=False)
            await done
    except TimeoutError:
        return _timed_out(conn, s, chan, timeout)
    except asyncssh.ChannelOpenError as e:
        # Refused before the command could start (open failure, MaxSessions, exec
        # request refused): nothing ran.
        failed_exec = e.code == asyncssh.OPEN_REQUEST_SESSION_FAILED
        started = s.opened and not failed_exec
        return Outcome(
            None,
            "",
            "",
            f"channel open failed: {e.reason}",
            started_remote=started,
            retry_ok=not started,
            conn_lost=conn.is_closed(),
        )
    except (asyncssh.Error, OSError) as e:
        return Outcome(
            None,
            *s.output(),
            _lost_reason(s, e),
            started_remote=s.opened,
            retry_ok=not s.opened,
            conn_lost=True,
        )
    except asyncio.CancelledError:
        if chan is not None:
            chan.close()
        raise
    out, err = s.output()
    if s.exit_status is not None:
        return Outcome(s.exit_status, out, err, None, True, callback_error=s.callback_error)
    if s.exit_signal is not None:
        reason = f"killed by signal {s.exit_signal}"
    elif s.lost is not None or conn.is_closed():
        reason = LOST_MID_COMMAND
    else:
        reason = "no exit status from host"
    return Outcome(
        None,
        out,
        err,
        reason,
        True,
        conn_lost=s.lost is not None or conn.is_closed(),
        callback_error=s.callback_error,
    )


def _lost_reason(s: _CommandSession, e: BaseException) -> str:
    if s.opened:
        return LOST_MID_COMMAND
    return f"connection lost before the command started: {getattr(e, 'reason', None) or e}"


def _timed_out(conn: asyncssh.SSHClientConnection, s: _CommandSession, chan, timeout: float) -> Outcome:
    out, err = s.output()
    reason = f"{TIMEOUT_PREFIX}{timeout:g}s"
    if chan is None or not s.opened:
        # Stuck before the channel was even set up: do not trust this connection.
        return Outcome(None, out, err, reason, started_remote=s.opened, conn_lost=True)
    if not s.closed:
        try:
            # OpenSSH delivers it only to privilege-separated sessions; for root
            # logins sshd refuses ("session signalling requires privilege
            # separation") and the command runs on, its output channel closed.
            chan.send_signal("KILL")
        except (asyncssh.Error, OSError):
            pass
        chan.close()

    async def probe() -> bool:
        # Healthy = the server still answers. sshd acknowledges the channel close
        # only once the command has exited, so ask what OpenSSH's ServerAlive asks:
        # a keepalive@openssh.com global request, via asyncssh's own keepalive call.
        ping = getattr(conn, "_make_global_request", None)
        if ping is None:  # pragma: no cover - other asyncssh versions: wait for the close
            await asyncio.wait_for(chan.wait_closed(), PROBE_GRACE)
        else:
            await asyncio.wait_for(ping(b"keepalive@openssh.com"), PROBE_GRACE)
        return not conn.is_closed()

    return Outcome(None, out, err, reason, started_remote=True, probe=probe())
