"""Structured values in words for a person: `key=value` and dotted paths,
never a Python repr (`{'a': [1, 2]}` reads as `a=1,2`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def scalar(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """(dotted path, text) for every leaf: a list of plain values is one leaf
    (`1,2,3`), a list of records is indexed (`ports[0].state`)."""
    if isinstance(value, dict):
        if not value:
            yield prefix, "-"
        for k, v in value.items():
            yield from flatten(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(value, (list, tuple)):
        if all(not isinstance(v, (dict, list, tuple)) for v in value):
            yield prefix, ",".join(scalar(v) for v in value) or "-"
        else:
            for i, v in enumerate(value):
                yield from flatten(v, f"{prefix}[{i}]")
    else:
        yield prefix, scalar(value)


def kv_text(value: Any, sep: str = ", ") -> str:
    """`k=v, k2.sub=v2` for a mapping, the plain text for anything else."""
    if not isinstance(value, (dict, list, tuple)):
        return scalar(value)
    return sep.join(f"{k}={v}" if k else v for k, v in flatten(value))
