"""What every parser is: a pure function from a tool's text output to a JSON-able record.

Parsers are named after what they read (`mlxconfig`, `ibstat`, ...). They never
guess: an output they do not recognise raises `ParseError` with a message that
says what was expected, never returns an empty record.

Two modes:
- strict (the default, what a step's verify uses): the complete output the
  step asked for is required; a missing header, block or field is a ParseError.
- lenient (`runbook parse` on a pasted fragment): the parser reads what is
  there and lists what is missing in `Gaps`; it still raises ParseError when
  nothing of its tool's output is there at all.
A parser that supports the lenient mode takes a keyword argument `gaps` and
reports every absent piece with `gaps.missing(...)`; in strict mode that call
raises, so one code path serves both modes.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Record = dict[str, Any]


class ParseError(ValueError):
    """The text is not the output this parser reads (or is too damaged to trust)."""


@dataclass
class Gaps:
    """What a parser did not find. Strict: the first gap raises ParseError."""

    tool: str
    lenient: bool = False
    items: list[str] = field(default_factory=list)

    def missing(self, what: str) -> None:
        if not self.lenient:
            raise ParseError(f"{self.tool}: {what} (incomplete output)")
        if what not in self.items:
            self.items.append(what)


@dataclass(frozen=True)
class Reading:
    """A parser's record and what it found missing (lenient reading)."""

    record: Record
    missing: list[str]


_FIXED_SPACES = "\u00a0\u2007\u202f\u2009"
_SPACES = str.maketrans(dict.fromkeys(_FIXED_SPACES, " "))


@dataclass(frozen=True)
class Parser:
    """A named parser: the command whose output it reads and how."""

    name: str
    reads: str  # the command whose output it reads, for `runbook parse --list` and docs
    func: Callable[..., Record]
    description: str = ""  # one line: what the record holds
    lenient: bool = False  # func accepts gaps=Gaps(...) and can read fragments
    # A copy pasted from a document is often indented as a whole (a code block in a list);
    # that margin is removed before parsing unless the parser reads meaning into a
    # line's indentation even when every line has it (lspci -vv: indented = no device line).
    keeps_indent: bool = False

    def __call__(self, text: str) -> Record:
        """Strict: the complete output is required."""
        return self.func(self._margin_removed(text))

    def read(self, text: str, *, lenient: bool = False) -> Reading:
        """Strict or lenient reading; a parser without a lenient mode reads strictly."""
        text = self._margin_removed(text)
        if not (lenient and self.lenient):
            return Reading(self.func(text), [])
        gaps = Gaps(self.name, lenient=True)
        record = self.func(text, gaps=gaps)
        return Reading(record, list(gaps.items))

    def _margin_removed(self, text: str) -> str:
        # Non-breaking and other fixed-width spaces come from web pages: plain spaces for us
        # (looked for first: a command's output rarely has one, and translate copies it all).
        if any(c in text for c in _FIXED_SPACES):
            text = text.translate(_SPACES)
        if self.keeps_indent or not text[:1].isspace():
            return text
        return textwrap.dedent(text.replace("\r\n", "\n").replace("\r", "\n"))


def strict_gaps(gaps: Gaps | None, tool: str) -> Gaps:
    """The gaps a parser function reports to: the caller's, else strict ones."""
    return gaps if gaps is not None else Gaps(tool)
