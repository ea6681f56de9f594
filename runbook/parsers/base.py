"""What every parser is: a pure function from a tool's text output to a JSON-able record.

Parsers are named after what they read (`mlxconfig`, `ibstat`, ...). They never
guess: an output they do not recognise raises `ParseError` with a message that
says what was expected, never returns an empty record.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

Record = dict[str, Any]


class ParseError(ValueError):
    """The text is not the output this parser reads (or is too damaged to trust)."""


@dataclass(frozen=True)
class Parser:
    name: str
    reads: str  # the command whose output it reads, for `runbook parse --help` and docs
    func: Callable[[str], Record]

    def __call__(self, text: str) -> Record:
        return self.func(text)
