"""Typed comparisons behind the path operators (eq ne lt le gt ge in matches
semver). Numbers compare as numbers when both sides read as numbers ("200"
and 200 are equal; "16GT/s" is a string); versions compare piecewise."""

from __future__ import annotations

import math
import re
from typing import Any


def as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:  # an int beyond float's range
            return None
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None  # nan and inf compare as nothing


def equal(found: Any, expected: Any) -> bool:
    a, b = as_number(found), as_number(expected)
    if a is not None and b is not None:
        return a == b
    if isinstance(found, str) and isinstance(expected, str):
        return found.strip() == expected.strip()
    if isinstance(expected, str) and not isinstance(found, (list, dict)):
        return str(found) == expected
    return found == expected


def version_key(text: str) -> tuple:
    """'23.10-1.1.9.0' -> (23, 10, 1, 1, 9, 0); text parts compare after numbers."""
    key = []
    for piece in re.split(r"[.\-_+:]", str(text)):
        key.append((0, int(piece), "") if piece.isdigit() else (1, 0, piece))
    return tuple(key)


_SEMVER = re.compile(r"^\s*(>=|<=|==|!=|>|<|=)?\s*([0-9A-Za-z][0-9A-Za-z.\-_+:~]*)\s*$")


def semver_problem(spec: Any) -> str | None:
    """Why a version range cannot be read (None: it can), e.g. `>>1`."""
    for clause in str(spec).split(","):
        if not _SEMVER.match(clause):
            return (
                f"bad version range {str(spec)!r}: each clause is an optional operator "
                f"(>= <= == != > < =) and a version, e.g. >=23.10,<24"
            )
    return None


def semver_ok(found: Any, spec: str) -> bool:
    """`>=23.10`, `==550.90.07`, or several joined by commas (all must hold).
    A range that cannot be read raises ValueError (the host is then unknown)."""
    problem = semver_problem(spec)
    if problem:
        raise ValueError(problem)
    for clause in str(spec).split(","):
        m = _SEMVER.match(clause)
        op, want = m.group(1) or "==", m.group(2)
        f, w = version_key(found), version_key(want)
        ok = {
            ">=": f >= w,
            "<=": f <= w,
            ">": f > w,
            "<": f < w,
            "==": f == w,
            "=": f == w,
            "!=": f != w,
        }[op]
        if not ok:
            return False
    return True


def order(found: Any, expected: Any, op: str) -> bool:
    a, b = as_number(found), as_number(expected)
    if a is None or b is None:
        raise TypeError(f"{op} needs numbers, found {found!r}")
    return {"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[op]


def apply(op: str, found: Any, expected: Any) -> bool:
    if op == "eq":
        return equal(found, expected)
    if op == "ne":
        return not equal(found, expected)
    if op in ("lt", "le", "gt", "ge"):
        return order(found, expected, op)
    if op == "in":
        return any(equal(found, e) for e in (expected if isinstance(expected, list) else [expected]))
    if op == "matches":
        return re.search(str(expected), str(found)) is not None
    if op == "semver":
        return semver_ok(found, expected)
    raise ValueError(f"unknown operator {op!r}")
