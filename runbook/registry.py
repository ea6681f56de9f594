"""Plug-in discovery: every module of a package that defines a list named
ATTR contributes its items, keyed by their `.name`. Adding a parser or a
design comparison is adding a file; a name defined twice is an error."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import Any


def discover(package: ModuleType, attr: str, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_") or info.name in skip:
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for item in getattr(module, attr, ()):
            if item.name in found:
                raise RuntimeError(f"{package.__name__}: {item.name!r} defined twice")
            found[item.name] = item
    return found
