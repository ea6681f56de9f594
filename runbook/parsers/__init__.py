"""Parser registry. Every module in this package that defines `PARSERS`
(a list of `Parser`) is registered under each parser's name; modules are
found automatically, so adding a parser is adding a file."""
from __future__ import annotations

from functools import cache

from .base import ParseError, Parser, Record

__all__ = ["ParseError", "Parser", "Record", "get", "names", "parse"]


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
    return get(name)(text)
