"""Registry of simulated commands: every module here defining COMMANDS
({name: func(ctx, args, io) -> int or awaitable int}) is picked up, and
ONLY_ON ({name: predicate(machine)}) limits where a command is installed.
Adding a tool is adding a file."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from .builtins import BUILTINS

__all__ = ["BUILTINS", "lookup", "names"]


@cache
def _registry():
    commands, only_on = {}, {}
    for info in pkgutil.iter_modules(__path__):
        if info.name in ("base", "builtins") or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for name, func in getattr(module, "COMMANDS", {}).items():
            if name in commands:
                raise RuntimeError(f"simulated command {name!r} defined twice")
            commands[name] = func
        only_on.update(getattr(module, "ONLY_ON", {}))
    return commands, only_on


def lookup(name: str, machine):
    commands, only_on = _registry()
    func = commands.get(name) or BUILTINS.get(name)
    if func is None:
        return None
    check = only_on.get(name)
    if check is not None and not check(machine):
        return None
    return func


def names() -> list[str]:
    return sorted(set(_registry()[0]) | set(BUILTINS))
