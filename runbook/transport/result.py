"""What one command on one host came to. The engine judges it; the transport
only says whether the command ran to completion and, when it did not, why
the host could not be assessed (`unknown_reason`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class CommandResult:
    """One command on one host: its output, exit status, times and attempts."""

    host: str
    command: str
    exit_status: int | None  # None when the command did not complete
    stdout: str
    stderr: str
    started: float  # time.time() when the attempt began
    ended: float
    # Set when the host could not be assessed, e.g. "unreachable: connection
    # refused", "timeout after 30s", "auth refused: ...", "host key refused: ...",
    # "connection lost mid-command". None when the command ran to completion.
    unknown_reason: str | None
    started_remote: bool  # the exec request was sent: it may have run
    attempts: int

    @property
    def completed(self) -> bool:
        return self.unknown_reason is None

    @property
    def ok(self) -> bool:
        return self.unknown_reason is None and self.exit_status == 0


class ConnectFailed(Exception):
    """A connection could not be opened. `reason` is the one-line unknown
    reason; `transient` says whether one retry may help (the server dropped the
    handshake, e.g. sshd's MaxStartups), as opposed to refused/timeout/auth/key.
    `timed_out`: the handshake did not complete in time (an overloaded or a dead
    host: only a read-only command is tried again, a bounded number of times)."""

    def __init__(self, reason: str, *, transient: bool = False, timed_out: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.transient = transient
        self.timed_out = timed_out
