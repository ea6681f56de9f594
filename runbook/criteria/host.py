"""Judging one host's output: exit status, stdout matchers, typed checks on
parsed paths, references with tolerance, design comparisons. Pure: text and
vars in, verdict out. A check that cannot read its evidence gives `unknown`,
never `pass`."""

from __future__ import annotations

import re
from typing import Any

from .. import parsers
from ..definition.model import Action, Check, Status
from ..definition.template import TemplateError, render_regex, render_value
from . import compare
from .design import is_fleet_check
from .paths import select
from .verdict import Verdict, short

# Equal outputs read the same (a parser is a pure function, parsers/base.py), and
# a fleet's nodes often print the very same text (a fabric sweep, lspci, versions):
# each parser's last few distinct outputs are kept with what they read, and the
# record is shared (nothing after parsing changes a record; it is read only).
MEMO_PER_PARSER = 4
_memo: dict[str, dict[str, tuple[Any, str | None]]] = {}


def parse_output(parser: str | None, stdout: str) -> tuple[Any, str | None]:
    """(record, problem). problem is set when the parser could not read the output."""
    if not parser:
        return None, None
    memo = _memo.setdefault(parser, {})
    known = memo.get(stdout)
    if known is not None:
        return known
    try:
        read: tuple[Any, str | None] = (parsers.parse(parser, stdout), None)
    except parsers.ParseError as exc:
        read = (None, f"could not read {parser} output: {exc}")
    if len(memo) >= MEMO_PER_PARSER:
        memo.pop(next(iter(memo), ""), None)  # the oldest
    memo[stdout] = read
    return read


def _stdout_check(check: Check, stdout: str, expected: str) -> str | None:
    if check.kind == "contains" and expected not in stdout:
        return f"expected output containing {short(expected)}, not found"
    if check.kind == "not_contains" and expected in stdout:
        return f"expected output without {short(expected)}, found it"
    if check.kind == "matches" and not re.search(expected, stdout, re.M):
        return f"expected output matching /{expected}/, no match"
    if check.kind == "not_matches":
        m = re.search(expected, stdout, re.M)
        if m:
            return f"expected no output matching /{expected}/, found {short(m.group(0))}"
    return None


def _reference(check: Check, found: Any, ref: Any, variables: dict) -> str | None:
    f, r = compare.as_number(found), compare.as_number(ref)
    if f is None or r is None:
        raise TypeError(f"reference check needs numbers, found {found!r} vs {ref!r}")
    if r == 0:
        raise ValueError("the reference is 0: a relative tolerance of it means nothing")
    lower = compare.as_number(render_value(check.lower, variables)) if check.lower is not None else None
    upper = compare.as_number(render_value(check.upper, variables)) if check.upper is not None else None
    lo = r * (1 + lower) if lower is not None else r
    hi = r * (1 + upper) if upper is not None else None
    if f < lo or (hi is not None and f > hi):
        band = f"≥ {lo:g}" if hi is None else f"{lo:g}..{hi:g}"
        return f"{check.path}: expected {band} (reference {r:g}), found {f:g} ({(f - r) / r:+.1%})"
    return None


def _count(check: Check, values: list[Any], expected: Any) -> str | None:
    n = len(values[0]) if len(values) == 1 and isinstance(values[0], (list, dict)) else len(values)
    if isinstance(expected, dict):
        op, want = next(iter(expected.items()))
    else:
        op, want = "eq", expected
    if not compare.apply(op, n, want):
        sign = {"eq": "", "ne": "≠ ", "lt": "< ", "le": "≤ ", "gt": "> ", "ge": "≥ "}[op]
        return f"{check.path}: expected count {sign}{want}, found {n}"
    return None


def _path_check(check: Check, record: Any, variables: dict) -> tuple[str | None, str | None]:
    """(failure, unknown) for one path check."""
    expected = render_value(check.value, variables)
    values = select(record, check.path)
    if check.op == "count":
        return _count(check, values, expected), None
    if not values:
        return None, f"{check.path}: no such value in the output (expected {check.op} {short(expected)})"
    for found in values:
        try:
            if check.op == "reference":
                bad = _reference(check, found, expected, variables)
                if bad:
                    return bad, None
            elif not compare.apply(check.op, found, expected):
                what = {
                    "eq": "",
                    "ne": "not ",
                    "lt": "< ",
                    "le": "≤ ",
                    "gt": "> ",
                    "ge": "≥ ",
                    "in": "one of ",
                    "matches": "matching ",
                    "semver": "version ",
                }[check.op]
                return f"{check.path}: expected {what}{short(expected)}, found {short(found)}", None
        except TypeError as exc:
            return None, f"{check.path}: {exc}"
    return None, None


def judge_host(
    action: Action,
    exit_status: int | None,
    stdout: str,
    variables: dict[str, Any],
    record: Any = None,
    parse_problem: str | None = None,
) -> Verdict:
    """Per-host verdict of an action's output. `record`/`parse_problem` come from
    `parse_output` (the engine parses once and keeps the record)."""
    failures: list[str] = []
    unknowns: list[str] = []
    exit_checks = [c for c in action.expect if c.kind == "exit"]
    allowed = [0]
    if exit_checks:
        v = exit_checks[0].value
        allowed = v if isinstance(v, list) else [v]
    if exit_status not in allowed:
        failures.append(f"exit status {exit_status} (expected {' or '.join(map(str, allowed))})")
    if action.parse and parse_problem and not failures:
        unknowns.append(parse_problem)
    for check in action.expect:
        if check.kind == "exit" or is_fleet_check(check):
            continue
        try:
            if check.kind == "path":
                if record is None:
                    continue  # the parse problem (or exit failure) already explains it
                bad, unk = _path_check(check, record, variables)
            elif check.kind == "design":
                from .design import get

                if record is None:
                    continue
                mismatches = get(check.value).func(record, variables)
                bad, unk = ("; ".join(mismatches) if mismatches else None), None
            else:
                regex = check.kind in ("matches", "not_matches")
                expected = (
                    render_regex(str(check.value), variables)
                    if regex
                    else str(render_value(check.value, variables))
                )
                bad, unk = _stdout_check(check, stdout, expected), None
        except TemplateError as exc:
            bad, unk = None, f"criterion at line {check.line}: {exc}"
        except re.error as exc:  # a templated regex that is invalid for this host's values
            bad, unk = None, f"criterion at line {check.line}: invalid regular expression: {exc}"
        except (KeyError, ValueError, TypeError, ArithmeticError) as exc:
            bad, unk = None, f"design data or output not as expected: {exc}"
        if bad:
            failures.append(bad)
        if unk:
            unknowns.append(unk)
    if failures:
        return Verdict.from_failures(failures)
    return Verdict.from_failures([], unknowns)


__all__ = ["judge_host", "parse_output", "Verdict", "Status"]
