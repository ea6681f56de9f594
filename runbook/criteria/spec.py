"""Criteria as written in step files -> typed `Check`s, with every problem
reported (line numbers come from the YAML). No `eval`: the language is a
fixed set of keys (goss/NHC-shaped)."""

from __future__ import annotations

import math
import re
from typing import Any

from ..definition.model import Check

PATH_OPS = ("eq", "ne", "lt", "le", "gt", "ge", "in", "matches", "semver", "count")
STDOUT_KINDS = ("contains", "not_contains", "matches", "not_matches")
NUMBER_OPS = ("lt", "le", "gt", "ge")


def _finite(value: Any, text: bool = True) -> bool:
    """A finite number (or, with text, a string that reads as one)."""
    if isinstance(value, bool) or not (isinstance(value, (int, float)) or (text and isinstance(value, str))):
        return False
    try:
        return math.isfinite(float(value))
    except (ValueError, OverflowError):
        return False


def parse_check(raw: Any, line: int) -> tuple[Check | None, list[str]]:
    """One criterion; returns the check or the problems found in it."""
    if not isinstance(raw, dict) or not raw:
        return None, [f"a criterion must be a mapping such as {{path: X, eq: Y}}, found {raw!r}"]
    keys = set(raw)
    if "exit" in keys:
        extra = keys - {"exit"}
        if extra:
            return None, [f"unexpected key(s) {sorted(extra)} beside exit"]
        v = raw["exit"]
        vals = v if isinstance(v, list) else [v]
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in vals):
            return None, [f"exit expects an integer or a list of integers, found {v!r}"]
        return Check("exit", value=list(vals) if isinstance(v, list) else v, line=line, raw=raw), []
    if "consistent" in keys:
        extra = keys - {"consistent"}
        if extra:
            return None, [f"unexpected key(s) {sorted(extra)} beside consistent"]
        return Check("consistent", path=str(raw["consistent"]), line=line, raw=raw), []
    if "design" in keys:
        from .design import comparators, known

        extra = keys - {"design"}
        if extra:
            return None, [f"unexpected key(s) {sorted(extra)} beside design"]
        name = raw["design"]
        if not isinstance(name, str) or not known(name):
            return None, [f"unknown design comparison {name!r} (known: {', '.join(sorted(comparators()))})"]
        return Check("design", value=name, line=line, raw=raw), []
    if "path" not in keys:
        kinds = keys & set(STDOUT_KINDS)
        if len(kinds) == 1 and keys == kinds:
            kind = kinds.pop()
            value = raw[kind]
            if not isinstance(value, str):
                return None, [f"{kind} expects a string, found {value!r}"]
            if kind.endswith("matches") and "{{" not in value:
                try:
                    re.compile(value)
                except re.error as exc:
                    return None, [f"{kind}: invalid regular expression: {exc}"]
            return Check(kind, value=value, line=line, raw=raw), []
        return None, [
            f"unknown criterion {sorted(keys)}: expected one of exit, contains, not_contains, matches, "
            f"not_matches, path (+ operator), consistent, design"
        ]
    path = raw["path"]
    if not isinstance(path, str) or not path:
        return None, [f"path must be a non-empty string, found {path!r}"]
    if "reference" in keys:
        extra = keys - {"path", "reference", "lower", "upper"}
        if extra:
            return None, [f"unexpected key(s) {sorted(extra)} in a reference check"]
        problems = []
        ref = raw["reference"]
        if "{{" not in str(ref) and not _finite(ref):
            problems.append(f"reference must be a number (or a {{{{ variable }}}}), found {ref!r}")
        for tol in ("lower", "upper"):
            if tol in raw and not _finite(raw[tol], text=False) and "{{" not in str(raw[tol]):
                problems.append(f"{tol} must be a number (a relative tolerance such as -0.10)")
        if problems:
            return None, problems
        return Check(
            "path",
            path=path,
            op="reference",
            value=raw["reference"],
            lower=raw.get("lower"),
            upper=raw.get("upper"),
            line=line,
            raw=raw,
        ), []
    ops = keys - {"path"}
    if len(ops) != 1:
        return None, [
            f"path check needs exactly one operator of {', '.join(PATH_OPS)} or reference, found {sorted(ops) or 'none'}"
        ]
    op = ops.pop()
    if op not in PATH_OPS:
        return None, [f"unknown operator {op!r} (known: {', '.join(PATH_OPS)}, reference)"]
    value = raw[op]
    if op == "matches" and isinstance(value, str) and "{{" not in value:
        try:
            re.compile(value)
        except re.error as exc:
            return None, [f"matches: invalid regular expression: {exc}"]
    if op == "in" and not isinstance(value, list) and "{{" not in str(value):
        return None, [f"in expects a list, found {value!r}"]
    if op in NUMBER_OPS and "{{" not in str(value) and not _finite(value):
        return None, [f"{op} expects a finite number, found {value!r}"]
    if op == "semver" and "{{" not in str(value):
        from .compare import semver_problem

        problem = semver_problem(value)
        if problem:
            return None, [f"semver: {problem}"]
    if op == "count":
        if isinstance(value, dict):
            if len(value) != 1 or next(iter(value)) not in ("eq", "ne") + NUMBER_OPS:
                return None, [f"count expects a number or one comparison such as {{ge: 7}}, found {value!r}"]
        elif not (isinstance(value, int) or "{{" in str(value)):
            return None, [f"count expects a number, found {value!r}"]
    return Check("path", path=path, op=op, value=value, line=line, raw=raw), []
