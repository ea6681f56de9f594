"""Checks that need both the runbook and the inventory: every step's host
selector resolves, and every template variable is defined on every host the
step targets. (Structural checks are in loader.py.)"""
from __future__ import annotations

from typing import Any, Iterator

from .errors import Problem
from .inventory import host_vars, select_hosts
from .model import Action, Inventory, Runbook, Step
from .template import has_default, placeholders

# Variables that exist at run time without being in the inventory.
RUNTIME_ROOTS = {"before", "inventory_hostname", "group_names", "groups", "hostvars"}


def _templates(action: Action) -> Iterator[tuple[str, int]]:
    yield action.run, action.line
    for check in action.expect:
        for value in (check.value, check.lower, check.upper):
            for text in _strings(value):
                yield text, check.line


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)


def _missing(template: str, variables: dict) -> list[str]:
    from .template import lookup, _MISSING

    out = []
    for path in placeholders(template):
        root = path.split(".")[0]
        if root in RUNTIME_ROOTS or has_default(template, path):
            continue
        if lookup(variables, path) is _MISSING:
            out.append(path)
    return out


def step_problems(step: Step, inventory: Inventory) -> list[Problem]:
    try:
        hosts = select_hosts(inventory, step.hosts)
    except (KeyError, ValueError) as exc:
        msg = exc.args[0] if exc.args else str(exc)
        return [Problem(step.file, step.line, f"step {step.id}: hosts {step.hosts!r}: {msg}")]
    if not hosts:
        return [Problem(step.file, step.line, f"step {step.id}: hosts {step.hosts!r} selects no host")]
    problems = []
    for name, action in (("verify", step.verify), ("apply", step.apply), ("rollback", step.rollback)):
        if action is None:
            continue
        for template, line in _templates(action):
            undefined: dict[str, list[str]] = {}
            for h in hosts:
                for var in _missing(template, host_vars(inventory, h)):
                    undefined.setdefault(var, []).append(h)
            for var, where in undefined.items():
                from ClusterShell.NodeSet import NodeSet

                who = "any targeted host" if len(where) == len(hosts) else str(NodeSet.fromlist(where))
                problems.append(Problem(step.file, line or step.line,
                                        f"step {step.id}: {name} uses {{{{ {var} }}}}, not defined for {who}"))
    return problems


def lint(runbook: Runbook, inventory: Inventory) -> list[Problem]:
    problems: list[Problem] = []
    for step in runbook.steps:
        problems.extend(step_problems(step, inventory))
    return problems
