"""Several read-only commands of one host as ONE shell script, and the script's
output split back into each command's own stdout, stderr and exit status.

    script = BatchScript(["nvidia-smi -q", "ofed_info -s"], token)
    ... run script.text in one exec channel; feed what arrives:
    script.feed(0, data)   # stdout bytes        script.feed(1, data)   # stderr bytes
    script.done            # how many commands have finished (both markers seen)
    script.result(i)       # (stdout, stderr, exit_status) of command i, once done

Each command runs as the login shell runs an exec request: `"$SHELL" -c CMD`
with $0 the shell's name (sshd's argv[0]), so `exit`, `set -e`, `cd`, a syntax
error or a failing command stay inside it and its messages read as they would
from its own channel. After each one the script writes a marker line on stdout
(a newline, the token, the command's index and its exit status) and on stderr
(the same without the status). The newline before the token is the script's,
not the command's, so output without a trailing newline comes back byte-exact.

The token is random (`secrets`, one per transport: a run) and never in the
script as one word (it is put together from two halves in a variable the
commands cannot see), so a command that shows the script's own command line
(ps, /proc/*/cmdline) cannot print a marker. A marker that is not the next
one expected stops the split: what is not finished is the caller's to run
alone. The same commands make the same script in a run (the simulator's shell
keeps the parse of a text it has seen: runbook/sim/shell/parser.py).
"""

from __future__ import annotations

import secrets
import shlex

# A status above 128 is what the script's shell sees from a command killed by a
# signal; from its own channel that command would have had no exit status
# ("killed by signal ...", unknown). The two cannot be told apart here: such a
# command is the caller's to run again alone (it is read-only).
SIGNALLED = 128


def build(commands: list[str], token: str) -> str:
    """The script. Short per command: the simulator's shell (and any sshd log)
    reads every character of it. Its variables are not exported: the commands,
    each in a shell of its own, cannot see them."""
    half = len(token) // 2
    lines = [
        f'_rbS="${{SHELL:-/bin/sh}}";_rbN="${{_rbS##*/}}";_rbA={token[:half]};_rbT="$_rbA"{token[half:]}'
    ]
    for i, command in enumerate(commands):
        lines.append(f'"$_rbS" -c {shlex.quote(command)} "$_rbN"')
        lines.append(f"printf '\\n%s {i} %d\\n' \"$_rbT\" $?;printf '\\n%s {i}\\n' \"$_rbT\" >&2")
    return "\n".join(lines) + "\n"


class _Stream:
    """One of stdout/stderr: bytes in, finished segments out (one per command).
    Stdout's markers carry the exit status, stderr's only the index."""

    def __init__(self, marker: bytes, with_status: bool):
        self.marker = marker
        self.fields = 2 if with_status else 1
        self.buf = bytearray()
        self.start = 0  # where the current command's output begins in buf
        self.scan = 0  # where to look for the next marker from
        self.segments: list[bytes] = []
        self.statuses: list[int] = []
        self.bad = False

    def feed(self, data: bytes) -> None:
        self.buf += data
        while not self.bad:
            at = self.buf.find(self.marker, self.scan)
            if at < 0:
                self.scan = max(self.start, len(self.buf) - len(self.marker) + 1)
                break
            end = self.buf.find(b"\n", at + len(self.marker))
            if end < 0:
                self.scan = at  # the marker's line is not complete yet
                break
            fields = bytes(self.buf[at + len(self.marker) : end]).split(b" ")
            index = len(self.segments)
            if len(fields) != self.fields or fields[0] != str(index).encode() or not fields[-1].isdigit():
                self.bad = True
                break
            self.segments.append(bytes(self.buf[self.start : at]))
            self.statuses.append(int(fields[-1]))
            self.start = self.scan = end + 1
        if self.start:  # what is split off is not kept twice
            del self.buf[: self.start]
            self.scan -= self.start
            self.start = 0

    def pending(self) -> bytes:
        """The output of the command still running (no marker yet)."""
        return bytes(self.buf[self.start :])


class BatchScript:
    def __init__(self, commands: list[str], token: str | None = None):
        """`token`: hex, at least 32 digits; a fresh one when not given."""
        self.commands = list(commands)
        self.token = token or secrets.token_hex(16)
        self.text = build(self.commands, self.token)
        marker = b"\n" + self.token.encode() + b" "
        self._streams = (_Stream(marker, True), _Stream(marker, False))

    def feed(self, stream: int, data: bytes) -> None:
        """stream 0 stdout, 1 stderr."""
        self._streams[stream].feed(data)

    @property
    def done(self) -> int:
        """Commands finished: both their markers seen."""
        return min(len(s.segments) for s in self._streams)

    @property
    def broken(self) -> bool:
        """A marker that was not the one expected: nothing after it is trusted."""
        return any(s.bad for s in self._streams)

    def result(self, i: int) -> tuple[str, str, int]:
        """Command i's output and status, once; its bytes are let go."""
        out, err = self._streams
        texts = []
        for stream in (out, err):
            texts.append(stream.segments[i].decode("utf-8", "replace"))
            stream.segments[i] = b""
        return texts[0], texts[1], out.statuses[i]

    def partial(self, i: int) -> tuple[str, str]:
        """What command i, still in flight, has written so far (after a timeout)."""
        texts = []
        for s in self._streams:
            data = s.segments[i] if len(s.segments) > i else s.pending()
            texts.append(data.decode("utf-8", "replace"))
        return texts[0], texts[1]

    def kept(self) -> int:
        """Bytes of output held that no finished command has taken."""
        return sum(len(s.buf) for s in self._streams)
