"""Parser registry. Every module in this package that defines `PARSERS`
(a list of `Parser`) is registered under each parser's name; modules are
found automatically, so adding a parser is adding a file."""
from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from .base import ParseError, Parser, Record

__all__ = ["ParseError", "Parser", "Record", "get", "names", "parse"]


@cache
def _registry() -> dict[str, Parser]:
    found: dict[str, Parser] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for parser in getattr(module, "PARSERS", ()):
            if parser.name in found:
                raise RuntimeError(f"parser {parser.name!r} defined twice")
            found[parser.name] = parser
    return found


def names() -> list[str]:
    return sorted(_registry())


def get(name: str) -> Parser:
    try:
        return _registry()[name]
    except KeyError:
        raise KeyError(f"unknown parser {name!r} (known: {', '.join(names())})") from None


def parse(name: str, text: str) -> Record:
    return get(name)(text)
