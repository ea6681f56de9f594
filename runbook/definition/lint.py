"""Checks that need both the runbook and the inventory: every step's host
selector resolves, and every template variable is defined on every host the
step targets. (Structural checks are in loader.py.)"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..errors import Problem
from ..inventory.hostsel import names_only_empty_groups
from ..inventory.load import host_vars, select_hosts
from .model import Action, Inventory, Runbook, Step
from .template import has_default, placeholders

# Variables that exist at run time without being in the inventory.
RUNTIME_ROOTS = {"before", "inventory_hostname", "group_names", "groups", "hostvars"}
# ... and those a step kind adds (docs/step-kinds.md).
KIND_ROOTS = {
    "pairs": {"peer", "nic", "peer_nic", "rail", "port"},
    "launch": {"launch_hosts", "launch_count", "launch_ranks"},
}


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


def _needed(template: str, extra: set[str] = frozenset()) -> list[str]:
    """The variable paths a template needs from the inventory."""
    return [
        p
        for p in placeholders(template)
        if p.split(".")[0] not in RUNTIME_ROOTS | extra and not has_default(template, p)
    ]


def _kind_problems(step: Step, inventory: Inventory, hosts: list[str]) -> list[Problem]:
    """Selectors and host names a step kind adds must resolve too."""
    problems = []
    selectors = []
    if step.run_on is not None and step.run_on.run_from:
        selectors.append(("run_from", step.run_on.run_from))
    if step.launch is not None:
        selectors.append(("launch.launcher", step.launch.launcher))
    for what, sel in selectors:
        try:
            if not select_hosts(inventory, sel) and not (
                what == "run_from" and names_only_empty_groups(inventory, sel)
            ):  # run_from from groups declared empty falls back to the step's hosts
                problems.append(
                    Problem(step.file, step.line, f"step {step.id}: {what} {sel!r} selects no host")
                )
        except (KeyError, ValueError) as exc:
            problems.append(
                Problem(
                    step.file,
                    step.line,
                    f"step {step.id}: {what} {sel!r}: {exc.args[0] if exc.args else exc}",
                )
            )
    if step.pairs is not None:
        for a, b in step.pairs.pairs:
            for h in (a, b):
                if h not in hosts:
                    problems.append(
                        Problem(
                            step.file,
                            step.line,
                            f"step {step.id}: pairs.list names {h}, not one of the step's hosts",
                        )
                    )
        if step.pairs.plan in ("rail", "cross_rail"):
            bare = [h for h in hosts if not host_vars(inventory, h).get("compute_nics")]
            if bare:
                from ClusterShell.NodeSet import NodeSet

                problems.append(
                    Problem(
                        step.file,
                        step.line,
                        f"step {step.id}: pairs plan {step.pairs.plan} needs "
                        f"`compute_nics` (dev, rail) on every host; missing on {NodeSet.fromlist(bare)}",
                    )
                )
    return problems


def step_problems(step: Step, inventory: Inventory, all_vars: dict[str, dict] | None = None) -> list[Problem]:
    from .template import _MISSING, lookup

    try:
        hosts = select_hosts(inventory, step.hosts)
    except (KeyError, ValueError) as exc:
        msg = exc.args[0] if exc.args else str(exc)
        return [Problem(step.file, step.line, f"step {step.id}: hosts {step.hosts!r}: {msg}")]
    if not hosts:
        if names_only_empty_groups(inventory, step.hosts):
            return []  # the inventory declares these groups empty: the step has no target (n/a)
        return [Problem(step.file, step.line, f"step {step.id}: hosts {step.hosts!r} selects no host")]
    problems = _kind_problems(step, inventory, hosts)
    extra = KIND_ROOTS.get(step.kind, set())
    server = step.pairs.server if step.pairs is not None else None
    cleanup = step.pairs.cleanup or None if step.pairs is not None else None
    for name, action in (
        ("verify", step.verify),
        ("apply", step.apply),
        ("rollback", step.rollback),
        ("pairs.server", server),
        ("pairs.cleanup", cleanup),
    ):
        if action is None:
            continue
        templates = [(action, step.line)] if isinstance(action, str) else _templates(action)
        for template, line in templates:
            needed = _needed(template, extra)
            if not needed:
                continue
            undefined: dict[str, list[str]] = {}
            for h in hosts:
                variables = all_vars[h] if all_vars is not None else host_vars(inventory, h)
                for var in needed:
                    if lookup(variables, var) is _MISSING:
                        undefined.setdefault(var, []).append(h)
            for var, where in undefined.items():
                from ClusterShell.NodeSet import NodeSet

                who = "any targeted host" if len(where) == len(hosts) else str(NodeSet.fromlist(where))
                problems.append(
                    Problem(
                        step.file,
                        line or step.line,
                        f"step {step.id}: {name} uses {{{{ {var} }}}}, not defined for {who}",
                    )
                )
    return problems


def lint(runbook: Runbook, inventory: Inventory) -> list[Problem]:
    problems: list[Problem] = []
    all_vars = {h: host_vars(inventory, h) for h in inventory.hosts}  # once per host, not per template
    for step in runbook.steps:
        problems.extend(step_problems(step, inventory, all_vars))
    problems.extend(_known_hosts_problems(all_vars))
    return problems


def _known_hosts_problems(all_vars: dict[str, dict]) -> list[Problem]:
    """Garbage lines in the known_hosts files the inventory names (a run would
    refuse them; lint says so first)."""
    from pathlib import Path

    from ..transport.hostkeys import known_hosts_problems

    files: dict[str, None] = {}
    for variables in all_vars.values():
        kh = variables.get("runbook_known_hosts")
        for f in kh if isinstance(kh, list) else [kh] if kh else []:
            files.setdefault(str(f), None)
    problems: list[Problem] = []
    for f in files:
        path = Path(f).expanduser()
        if path.is_file():
            problems.extend(known_hosts_problems(path))
    return problems
