"""Parser registry. Every module in this package that defines `PARSERS`
(a list of `Parser`) is registered under each parser's name; modules are
found automatically, so adding a parser is adding a file."""

from __future__ import annotations

import importlib
import sys
from functools import cache

from .base import Gaps, ParseError, Parser, Reading, Record

__all__ = [
    "Gaps",
    "ParseError",
    "Parser",
    "Reading",
    "Record",
    "get",
    "index",
    "known",
    "names",
    "parse",
    "read",
    "use_index",
]

# name -> module, from a full discovery of the same source (runbook/workspace/lint_cache.py
# keys it by a hash of that source): lets a run import the one parser module it uses
# instead of all of them. Only a hint: what it names is looked up and checked there.
_hint: dict[str, str] = {}


@cache
def _registry() -> dict[str, Parser]:
    from ..registry import discover

    return discover(sys.modules[__name__], "PARSERS", skip=("base",))


def use_index(hint: dict[str, str]) -> None:
    _hint.clear()
    _hint.update(hint)


def index() -> dict[str, str]:
    """name -> the module (of this package) whose PARSERS holds it, for use_index."""
    from ..registry import holders

    return {name: module for name, (module, _) in holders(__name__, "PARSERS", _registry()).items()}


def known(name: str) -> bool:
    return name in _hint or name in _registry()


def names() -> list[str]:
    return sorted(_registry())


def _hinted(name: str) -> Parser | None:
    module = _hint.get(name)
    if module is None or _registry.cache_info().currsize:
        return None
    try:
        mod = importlib.import_module(f"{__name__}.{module}")
    except ImportError:
        return None
    for item in getattr(mod, "PARSERS", ()):
        if item.name == name:
            return item
    return None


def get(name: str) -> Parser:
    found = _hinted(name)
    if found is not None:
        return found
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
