"""Small helpers shared by the design comparators (not a comparator module)."""
from __future__ import annotations

from typing import Any



def pkey_number(value: Any) -> int:
    """'0x100' / '0x8100' / 256 -> the 15-bit partition number."""
    return (int(value, 0) if isinstance(value, str) else int(value)) & 0x7FFF


def pkey_text(value: Any) -> str:
    return f"0x{pkey_number(value):04x}"


def examples(items: list[str], limit: int = 4) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def by_key(mapping: dict, key: Any) -> Any:
    """mapping[key] whether YAML gave the key as an int or a string (rail_leaves: {1: leaf01})."""
    for k in (key, str(key)):
        if k in mapping:
            return mapping[k]
    if isinstance(key, str) and key.isdigit() and int(key) in mapping:
        return mapping[int(key)]
    raise KeyError(key)
