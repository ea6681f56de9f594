"""The inventory variables a design comparison reads, found in its module's
source: `v["x"]`, `v.get("x")`, `variables[h].get("x")`, and the designed NIC
lists (`compute_nics`, `storage_nics`) read through designs/_util.py's
`designed_nics`. The completion log records these for every host with the
variables of the commands (runbook/store/snapshot.py), so the
report and a verifier see the design each verdict was judged against
(the rail picture needs `compute_nics` and `ib_port_guids`)."""

from __future__ import annotations

import ast
import inspect
from functools import cache
from typing import Any

# The names a comparator receives the inventory variables under (host scope:
# `v`, fleet scope: `variables[host]`).
VARS_NAMES = frozenset({"v", "variables", "hv"})
NIC_LISTS = ("compute_nics", "storage_nics")


def _is_vars(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in VARS_NAMES
    return (
        isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "variables"
    )


def variables_read_in(source: str) -> set[str]:
    """String keys read as v["x"], v.get("x"), variables[h].get("x") in Python source."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and _is_vars(node.value):
            key = node.slice
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and _is_vars(node.func.value)
            and node.args
        ):
            key = node.args[0]
        else:
            continue
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            out.add(key.value)
    if "designed_nics(" in source:
        out.update(NIC_LISTS)
    return out


@cache
def variables_read_by(name: str) -> frozenset[str]:
    """The variables the design comparison `name` reads; empty if unknown or its
    source cannot be read (then the log simply records less)."""
    from .design import get

    comp = get(name)
    module = inspect.getmodule(comp.func) if comp else None
    try:
        return frozenset(variables_read_in(inspect.getsource(module))) if module else frozenset()
    except (OSError, TypeError, SyntaxError):
        return frozenset()


def design_names(step: Any) -> set[str]:
    """The design comparisons a step's verify, apply and rollback name."""
    out = set()
    for action in (
        getattr(step, "verify", None),
        getattr(step, "apply", None),
        getattr(step, "rollback", None),
    ):
        for c in getattr(action, "expect", ()) or ():
            if getattr(c, "kind", "") == "design":
                out.add(str(c.value))
    return out


def design_roots(runbook: Any) -> set[str]:
    """Every variable the design comparisons named by the runbook's steps read."""
    steps = getattr(runbook, "steps", ()) or ()
    return {var for step in steps for name in design_names(step) for var in variables_read_by(name)}
