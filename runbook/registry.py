"""Plug-in discovery: every module of a package that defines a list named
ATTR contributes its items, keyed by their `.name`. Adding a parser or a
design comparison is adding a file; a name defined twice is an error."""

from __future__ import annotations

import importlib
import pkgutil
import sys
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


def holders(package: str, attr: str, registry: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    """name -> (the module of `package` whose `attr` holds the item `registry` has under
    that name, the item): where a full discovery found each name, for an index that
    later imports only the one module a name needs (parsers.index, criteria/design.py)."""
    out = {}
    for module_name, module in list(sys.modules.items()):
        if module_name.startswith(f"{package}.") and module is not None:
            for item in getattr(module, attr, ()):
                if registry.get(item.name) is item:
                    out[item.name] = (module_name.rsplit(".", 1)[1], item)
    return out
