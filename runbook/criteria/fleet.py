"""Fleet-level judging: consistency across hosts and fleet design comparisons.

`consistent: PATH` — every targeted host reports the same value. The verdict
names the majority value and the outliers as a folded NodeSet; with no clear
majority every host fails ("fleet split"). Hosts that could not be assessed
(unknown) are left out of the vote and keep their status.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from ..definition.model import Action, Status
from ..inventory.hostsel import fold
from .design import get as get_comparator
from .design import scope as design_scope
from .paths import select
from .verdict import Verdict, short


def _value_of(path: str, record: Any, stdout: str) -> Any:
    if path == "stdout":
        return stdout.strip()
    values = select(record, path) if record is not None else []
    if not values:
        raise LookupError(path)
    return values[0] if len(values) == 1 else values


def consistency(path: str, observed: dict[str, tuple[Any, str]]) -> dict[str, str | None]:
    """observed: host -> (record, stdout). Returns host -> failure (None = consistent)."""
    values: dict[str, Any] = {}
    missing: dict[str, str] = {}
    for host, (record, stdout) in observed.items():
        try:
            values[host] = _value_of(path, record, stdout)
        except LookupError:
            missing[host] = f"{path}: no such value in the output, cannot compare with the fleet"
    keyed = {h: json.dumps(v, sort_keys=True, default=str) for h, v in values.items()}
    counts = Counter(keyed.values())
    result: dict[str, str | None] = {h: None for h in values}
    result.update(missing)
    if len(counts) <= 1:
        return result
    (top, n_top), (_, n_second) = counts.most_common(2)
    if n_top == n_second:
        groups = ", ".join(
            f"{short(json.loads(k))} on {fold([h for h, kk in keyed.items() if kk == k])}"
            for k, _ in counts.most_common()
        )
        for h in values:
            result[h] = f"{path}: fleet split with no majority: {groups}"
        return result
    majority = json.loads(top)
    outliers = [h for h, k in keyed.items() if k != top]
    for h in outliers:
        result[h] = (
            f"{path}: found {short(values[h])}, fleet majority {short(majority)} "
            f"({n_top}/{len(values)} hosts); outliers {fold(outliers)}"
        )
    return result


def judge_fleet(
    action: Action,
    verdicts: dict[str, Verdict],
    records: dict[str, Any],
    stdouts: dict[str, str],
    variables: dict[str, dict],
) -> dict[str, Verdict]:
    """Apply the action's fleet checks on top of the per-host verdicts."""
    out = dict(verdicts)
    # Only hosts whose output was read take part; unknown hosts stay unknown.
    assessed = [h for h, v in verdicts.items() if v.status in (Status.PASS, Status.FAIL)]
    extra: dict[str, list[str]] = {h: [] for h in assessed}
    extra_unknown: dict[str, list[str]] = {h: [] for h in assessed}
    for check in action.expect:
        if check.kind == "consistent":
            observed = {h: (records.get(h), stdouts.get(h, "")) for h in assessed}
            for h, problem in consistency(check.path, observed).items():
                if problem and "no such value" in problem:
                    extra_unknown[h].append(problem)
                elif problem:
                    extra[h].append(problem)
        elif check.kind == "design" and design_scope(check.value) == "fleet":
            comp = get_comparator(check.value)
            have = {h: records[h] for h in assessed if records.get(h) is not None}
            try:
                mismatches = comp.func(have, {h: variables[h] for h in have})
            except (KeyError, ValueError, TypeError, ArithmeticError, re.error) as exc:
                for h in have:
                    extra_unknown[h].append(f"{check.value}: design data or output not as expected: {exc}")
                continue
            for h, problems in mismatches.items():
                if h in extra:
                    extra[h].extend(problems)
    for h in assessed:
        if extra[h] or extra_unknown[h]:
            base = verdicts[h]
            failures = base.failures + extra[h] if base.status == Status.FAIL else extra[h]
            out[h] = Verdict.from_failures(failures, [] if failures else extra_unknown[h])
    return out
