"""One SSH session channel of a simulated node, served without asyncssh's process
layer when it is what runbook sends: an exec request without a terminal.

asyncssh's process_factory puts a process object, three stream objects, a
line-editor wrapper (whose attributes are looked up through __getattr__ on
every write) and a logged task of its own between a channel and the command;
on 1,000 nodes a whole runbook opens ~26,000 channels. Without them an exec
channel of `true` costs the simulator 135-172 us of CPU instead of 175-208 us
(bench/README.md, "After session 14"). Here the session is the
process: exec_channel (session.py) gets an object with the process's members
it uses (command, stdin.read(), stdout/stderr.write, exit, channel,
is_closing, wait_closed) and the channel's bytes are the same.

A session that asks for a terminal or a shell (an engineer's `ssh node`) gets
asyncssh's process and line editor, built as asyncssh builds them when its
`line_editor` option is on (channel.py `_wrap_session`): the lab's
connections have that option off (lab.py), so a plain exec never pays for it.
"""

from __future__ import annotations

import asyncio
import logging

import asyncssh
from asyncssh.editor import SSHLineEditorChannel, SSHLineEditorSession
from asyncssh.process import SSHServerProcess

from .session import exec_channel

log = logging.getLogger("runbook.sim")
SFTP_VERSION = 3  # asyncssh's MIN_SFTP_VERSION; no SFTP is served (no sftp_factory)


class _Writer:
    """stdout or stderr of the command: the channel's data or extended data."""

    __slots__ = ("_chan", "_datatype")

    def __init__(self, chan, datatype) -> None:
        self._chan = chan
        self._datatype = datatype

    def write(self, text: str) -> None:
        self._chan.write(text, self._datatype)  # raises as SSHWriter's does once the channel is gone


class _Stdin:
    """What the client sends, whole once it sends EOF (or the channel goes)."""

    def __init__(self) -> None:
        self.chunks: list[str] = []
        self.ended = asyncio.Event()

    async def read(self) -> str:
        await self.ended.wait()
        return "".join(self.chunks)


class ExecSession(asyncssh.SSHServerSession):
    def __init__(self, node) -> None:
        self.node = node
        self.channel = None
        self.command: str | None = None
        self.stdin = _Stdin()
        self.stdout = self.stderr = None
        self._closed = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._full = None  # the line editor's session around asyncssh's process, once a pty or shell is asked

    # -- asyncssh's callbacks --------------------------------------------------
    def connection_made(self, chan) -> None:
        self.channel = chan
        self.stdout = _Writer(chan, None)
        self.stderr = _Writer(chan, asyncssh.EXTENDED_DATA_STDERR)

    def pty_requested(self, term_type, term_size, term_modes) -> bool:
        return self._go_full().pty_requested(term_type, term_size, term_modes)

    def shell_requested(self) -> bool:
        return self._go_full().shell_requested()

    def exec_requested(self, command: str) -> bool:
        if self._full is not None:
            return self._full.exec_requested(command)
        self.command = command
        return True

    def subsystem_requested(self, subsystem: str) -> bool:
        return False  # no SFTP or other subsystem on a simulated node (allow_scp off too)

    def session_started(self) -> None:
        if self._full is not None:
            self._full.session_started()
            return
        self._task = asyncio.get_running_loop().create_task(exec_channel(self.node, self))
        self._task.add_done_callback(_report)

    def data_received(self, data, datatype) -> None:
        if self._full is not None:
            self._full.data_received(data, datatype)
        elif datatype is None:
            self.stdin.chunks.append(data)

    def eof_received(self) -> bool:
        if self._full is not None:
            return self._full.eof_received()
        self.stdin.ended.set()
        return True  # half open: the command's output still goes out (as asyncssh's streams do)

    def break_received(self, msec: int) -> bool:
        return self._full.break_received(msec) if self._full is not None else False

    def signal_received(self, signal: str) -> None:
        if self._full is not None:
            self._full.signal_received(signal)

    def terminal_size_changed(self, width, height, pixwidth, pixheight) -> None:
        if self._full is not None:
            self._full.terminal_size_changed(width, height, pixwidth, pixheight)

    def pause_writing(self) -> None:
        if self._full is not None:
            self._full.pause_writing()

    def resume_writing(self) -> None:
        if self._full is not None:
            self._full.resume_writing()

    def connection_lost(self, exc) -> None:
        if self._full is not None:
            self._full.connection_lost(exc)
        self.stdin.ended.set()
        self._closed.set()

    # -- what exec_channel asks of a process ------------------------------------
    def is_closing(self) -> bool:
        return self.channel.is_closing()

    async def wait_closed(self) -> None:
        await self._closed.wait()

    def exit(self, status: int) -> None:
        self.channel.exit(status)

    # -- a terminal or a shell: asyncssh's process and line editor -----------------
    def _go_full(self):
        if self._full is None:
            chan = self.channel
            process = SSHServerProcess(lambda p: exec_channel(self.node, p), None, SFTP_VERSION, False)
            editor_chan = SSHLineEditorChannel(
                chan,
                process,
                getattr(chan, "_line_echo", True),
                getattr(chan, "_line_history", 1000),
                getattr(chan, "_max_line_length", 1024),
            )
            self._full = SSHLineEditorSession(editor_chan, process)
            process.connection_made(editor_chan)
        return self._full


def _report(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("a session of the simulator failed", exc_info=task.exception())
