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


@cache
def _named(name: str) -> Parser | None:
    """The parser NAME, importing only the modules whose source spells NAME as a string
    literal, not all fifty (a `runbook run` of one step needs one parser: this is ~0.3 s
    of its start-up, bench/cold_start.py). None when that finds nothing or finds it twice:
    the caller then discovers every module, which also reports a duplicate."""
    import importlib
    import pkgutil
    import sys
    from pathlib import Path

    package = sys.modules[__name__]
    found = None
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_") or info.name == "base":
            continue
        try:
            text = (Path(info.module_finder.path) / f"{info.name}.py").read_text(encoding="utf-8")
        except (AttributeError, OSError):  # a package, a zip, bytecode only: no shortcut
            return None
        if f'"{name}"' not in text and f"'{name}'" not in text:
            continue
        for item in getattr(importlib.import_module(f"{__name__}.{info.name}"), "PARSERS", ()):
            if item.name == name:
                if found is not None:
                    return None
                found = item
    return found


def get(name: str) -> Parser:
    parser = _named(name)
    if parser is not None:
        return parser
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
