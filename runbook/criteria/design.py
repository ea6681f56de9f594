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

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True)
class Comparator:
    name: str
    scope: str  # "host" | "fleet"
    func: Callable[..., Any]
    describe: str = ""


@cache
def comparators() -> dict[str, Comparator]:
    from ..registry import discover
    from . import designs

    return discover(designs, "COMPARATORS")


def is_fleet_check(check) -> bool:
    """Judged across the hosts of a step, not on one host's output."""
    return check.kind == "consistent" or (
        check.kind == "design" and comparators()[check.value].scope == "fleet"
    )
