"""Paths into a parsed record: `LINK_TYPE_P1`, `gpus[0].name`, `ports.*.state`,
`cas[*].ports.1.rate`. `*` expands to every element (of a list or a dict's
values), so one path may select many values."""

from __future__ import annotations

import re
from typing import Any

_BRACKET = re.compile(r"\[([^\]]*)\]")


def split(path: str) -> list[str]:
    parts = []
    for chunk in _BRACKET.sub(r".\1", path).split("."):
        if chunk != "":
            parts.append(chunk)
    return parts


def select(record: Any, path: str) -> list[Any]:
    """Every value the path selects (empty when nothing is there)."""
    current = [record]
    for part in split(path):
        nxt: list[Any] = []
        for value in current:
            if part == "*":
                if isinstance(value, dict):
                    nxt.extend(value.values())
                elif isinstance(value, list):
                    nxt.extend(value)
            elif isinstance(value, dict):
                if part in value:
                    nxt.append(value[part])
                elif part.lstrip("-").isdigit() and int(part) in value:
                    nxt.append(value[int(part)])
            elif isinstance(value, list) and part.lstrip("-").isdigit():
                i = int(part)
                if -len(value) <= i < len(value):
                    nxt.append(value[i])
        current = nxt
    return current


def is_multi(path: str) -> bool:
    return "*" in split(path)
