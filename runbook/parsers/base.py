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

from dataclasses import dataclass, field
from typing import Any, Callable

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
    record: Record
    missing: list[str]


@dataclass(frozen=True)
class Parser:
    name: str
    reads: str  # the command whose output it reads, for `runbook parse --list` and docs
    func: Callable[..., Record]
    description: str = ""  # one line: what the record holds
    lenient: bool = False  # func accepts gaps=Gaps(...) and can read fragments

    def __call__(self, text: str) -> Record:
        """Strict: the complete output is required."""
        return self.func(text)

    def read(self, text: str, *, lenient: bool = False) -> Reading:
        """Strict or lenient reading; a parser without a lenient mode reads strictly."""
        if not (lenient and self.lenient):
            return Reading(self.func(text), [])
        gaps = Gaps(self.name, lenient=True)
        record = self.func(text, gaps=gaps)
        return Reading(record, list(gaps.items))


def strict_gaps(gaps: Gaps | None, tool: str) -> Gaps:
    """The gaps a parser function reports to: the caller's, else strict ones."""
    return gaps if gaps is not None else Gaps(tool)
