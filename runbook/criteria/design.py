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
import pkgutil
from dataclasses import dataclass
from functools import cache
from typing import Any, Callable


@dataclass(frozen=True)
class Comparator:
    name: str
    scope: str  # "host" | "fleet"
    func: Callable[..., Any]
    describe: str = ""


@cache
def comparators() -> dict[str, Comparator]:
    from . import designs

    found: dict[str, Comparator] = {}
    for info in pkgutil.iter_modules(designs.__path__):
        module = importlib.import_module(f"{designs.__name__}.{info.name}")
        for comp in getattr(module, "COMPARATORS", ()):
            if comp.name in found:
                raise RuntimeError(f"design comparison {comp.name!r} defined twice")
            found[comp.name] = comp
    return found
