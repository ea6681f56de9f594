"""Parser registry. Every module in this package that defines `PARSERS`
(a list of `Parser`) is registered under each parser's name; modules are
found automatically, so adding a parser is adding a file."""

from __future__ import annotations

from functools import cache

from .base import Gaps, ParseError, Parser, Reading, Record

__all__ = ["Gaps", "ParseError", "Parser", "Reading", "Record", "get", "names", "parse", "read"]


@cache
def _registry() -> dict[str, Parser]:
    import sys

    from ..registry import discover

    return discover(sys.modules[__name__], "PARSERS", skip=("base",))


def names() -> list[str]:
    return sorted(_registry())


def get(name: str) -> Parser:
    try:
        return _registry()[name]
    except KeyError:
        raise KeyError(f"unknown parser {name!r} (known: {', '.join(names())})") from None


def parse(name: str, text: str) -> Record:
    """Strict: the complete output is required (what a step's verify uses)."""
    return get(name)(text)


def read(name: str, text: str, *, lenient: bool = False) -> Reading:
    """The record and, when lenient, what the (pasted, partial) text lacked."""
    return get(name).read(text, lenient=lenient)
