"""The plumbing commands read from and write to: whole-text stdin, buffered outputs."""

from __future__ import annotations

from dataclasses import dataclass


class Stdin:
    def __init__(self, text: str = ""):
        self.text = text
        self.pos = 0

    def read_all(self) -> str:
        rest = self.text[self.pos :]
        self.pos = len(self.text)
        return rest

    def readline(self) -> str | None:
        """One line without its newline, or None at end of input."""
        if self.pos >= len(self.text):
            return None
        end = self.text.find("\n", self.pos)
        if end < 0:
            line, self.pos = self.text[self.pos :], len(self.text)
        else:
            line, self.pos = self.text[self.pos : end], end + 1
        return line


class Buffer:
    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> None:
        if text:
            self.parts.append(text)

    def text(self) -> str:
        return "".join(self.parts)


class Discard(Buffer):
    def write(self, text: str) -> None:
        pass


@dataclass
class Io:
    stdin: Stdin
    out: Buffer
    err: Buffer


class FileSink(Buffer):
    """An output redirected into a regular file: opened (truncated) at once and
    written through on every write, so another command can read it meanwhile."""

    def __init__(self, fs, path: str, append: bool = False) -> None:
        super().__init__()
        self.fs, self.path = fs, path
        fs.write(path, "", append=append)  # create or truncate, as open(2) does

    def write(self, text: str) -> None:
        if text:
            self.parts.append(text)
            self.fs.write(self.path, text, append=True)
