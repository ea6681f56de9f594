"""Design comparisons: the measured fact against the design in the inventory.

A comparator is registered by name and used in a step as `{design: NAME}`.
Host scope: `func(record, vars) -> [mismatch, ...]` (empty = as designed).
Fleet scope: `func(records: {host: record}, vars: {host: vars}) -> {host: [mismatch, ...]}`
for facts that only make sense across hosts (one SM master, ...). Each
mismatch is one readable "expected vs found" line naming what differs.
Comparators live in `runbook/criteria/designs/`, one module per subject,
found automatically (a module defines `COMPARATORS = [Comparator(...)]`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True)
class Comparator:
    """A named `design:` comparison and whether it judges a host or the fleet."""

    name: str
    scope: str  # "host" | "fleet"
    func: Callable[..., Any]
    describe: str = ""


# name -> (module, scope), from a full discovery of the same source (runbook/workspace/
# lint_cache.py keeps it beside the parsers' index, keyed by the code's fingerprint): a
# step's `design:` names and scopes are checked without importing every comparator
# module, and the one a step uses is imported when it is judged (as parsers.use_index).
_hint: dict[str, tuple[str, str]] = {}
_discovered: list[bool] = []  # comparators() has run: the index is no longer needed


@cache
def comparators() -> dict[str, Comparator]:
    """Every comparator (imports every module of designs/)."""
    from ..registry import discover
    from . import designs

    found = discover(designs, "COMPARATORS")
    _discovered.append(True)
    return found


def use_index(hint: dict[str, tuple[str, str]]) -> None:
    _hint.clear()
    _hint.update(hint)


def index() -> dict[str, tuple[str, str]]:
    """name -> (the module of designs/ whose COMPARATORS holds it, scope), for use_index."""
    from ..registry import holders

    found = holders(f"{__package__}.designs", "COMPARATORS", comparators())
    return {name: (module, item.scope) for name, (module, item) in found.items()}


def known(name: str) -> bool:
    return (name in _hint and not _discovered) or name in comparators()


def scope(name: str) -> str:
    """host | fleet; KeyError for an unknown name."""
    if name in _hint and not _discovered:
        return _hint[name][1]
    return comparators()[name].scope


def get(name: str) -> Comparator | None:
    """The comparator named `name`, importing only its module when the index names it."""
    hinted = _hint.get(name)
    if hinted is not None and not _discovered:
        try:
            module = importlib.import_module(f"{__package__}.designs.{hinted[0]}")
        except ImportError:
            module = None
        for item in getattr(module, "COMPARATORS", ()):
            if item.name == name and item.scope == hinted[1]:
                return item
    return comparators().get(name)


def is_fleet_check(check) -> bool:
    """Judged across the hosts of a step, not on one host's output."""
    return check.kind == "consistent" or (check.kind == "design" and scope(check.value) == "fleet")
