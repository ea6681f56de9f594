"""What would run, per step and host, before anything runs: the data behind
`runbook plan` (text, Markdown, JSON) and the TUI's step pane. Hosts whose
rendered command is identical are folded together as one NodeSet."""

from __future__ import annotations

from typing import Any

from ..criteria.describe import describe
from ..inventory.load import fold, host_vars, select_hosts
from .kinds import launch_variables
from .model import Action, Inventory, Runbook, Step
from .targets import ordered, targets
from .template import TemplateError, lookup, placeholders, render_command

BEFORE_PLACEHOLDER = "<before>"


class _BeforeStub(dict):
    """Stands in for `before` values in a plan: they are only known at run time."""

    def __missing__(self, key):
        return BEFORE_PLACEHOLDER

    def __contains__(self, key) -> bool:  # template.lookup asks `part in value` first
        return True


def _commands(action: Action, hosts: list[str], inventory: Inventory, extra=None) -> list[dict[str, str]]:
    by_cmd: dict[str, list[str]] = {}
    for h in hosts:
        variables = dict(host_vars(inventory, h))
        variables["before"] = _BeforeStub()
        variables.update(extra(h) if extra else {})
        try:
            cmd = render_command(action.run, variables)
        except TemplateError as exc:
            cmd = f"<cannot build the command: {exc}>"
        by_cmd.setdefault(cmd, []).append(h)
    if len(by_cmd) > 3:
        # A command rendered differently on every host (it names the host):
        # one example, not a page of near-identical lines.
        cmd, hs = next(iter(by_cmd.items()))
        return [{"hosts": fold(hosts), "command": cmd, "example_for": fold(hs), "variants": len(by_cmd)}]
    return [{"hosts": fold(hs), "command": cmd} for cmd, hs in by_cmd.items()]


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


def _design_values(
    action: Action, hosts: list[str], inventory: Inventory, extra=None
) -> list[dict[str, Any]]:
    """The inventory values the criteria compare with ({{ var }} in a criterion), folded by
    value: the plan shows `gpu_power_limit_w = 350`, not only the placeholder."""
    names: list[str] = []
    for check in action.expect:
        for text in _texts(check.raw):
            names += [n for n in placeholders(text) if n not in names and not n.startswith("before.")]
    out = []
    for name in names:
        by_value: dict[str, tuple[Any, list[str]]] = {}
        for h in hosts:
            value = lookup({**host_vars(inventory, h), **(extra(h) if extra else {})}, name)
            value = None if not isinstance(value, (str, int, float, bool, list, dict)) else value
            by_value.setdefault(repr(value), (value, []))[1].append(h)
        if len(by_value) > 3:  # a per-host value (inventory_hostname): one example, as _commands does
            value, hs = next(iter(by_value.values()))
            out.append(
                {
                    "name": name,
                    "value": value,
                    "hosts": fold(hosts),
                    "example_for": fold(hs),
                    "variants": len(by_value),
                }
            )
            continue
        out += [{"name": name, "value": v, "hosts": fold(hs)} for v, hs in by_value.values()]
    return out


def _criteria(
    action: Action, hosts: list[str], inventory: Inventory, extra=None
) -> tuple[list[str], list[dict]]:
    """The criteria with each host's values filled in. Hosts whose criteria read
    the same are folded; `criteria` is the first group's (all hosts' when they agree)."""
    by_text: dict[tuple[str, ...], list[str]] = {}
    for h in hosts:
        variables = {**host_vars(inventory, h), **(extra(h) if extra else {})}
        texts = tuple(describe(c, variables) for c in action.expect) or ("exit status == 0",)
        by_text.setdefault(texts, []).append(h)
    if not by_text:  # no host selected: as written
        return [describe(c) for c in action.expect] or ["exit status == 0"], []
    groups = [{"hosts": fold(hs), "criteria": list(texts)} for texts, hs in by_text.items()]
    if len(groups) > 3:  # rendered per host (it names the host): one example, as for commands
        groups = [
            {"hosts": fold(hosts), "criteria": groups[0]["criteria"], "example_for": groups[0]["hosts"]}
        ]
    return groups[0]["criteria"], groups if len(groups) > 1 or groups[0].get("example_for") else []


def _action(
    action: Action | None, hosts: list[str], inventory: Inventory, extra=None
) -> dict[str, Any] | None:
    if action is None:
        return None
    criteria, per_hosts = _criteria(action, hosts, inventory, extra)
    return {
        "run": action.run,
        "commands": _commands(action, hosts, inventory, extra),
        "parse": action.parse,
        "criteria": criteria,
        **({"criteria_by_hosts": per_hosts} if per_hosts else {}),
        "design_values": _design_values(action, hosts, inventory, extra),
        "timeout": action.timeout,
        "then": action.then,
    }


def _kind(step: Step, inventory: Inventory, hosts: list[str]) -> tuple[str, list[str], Any]:
    """What a step kind (docs/step-kinds.md) runs where, for the plan: a description,
    the hosts the verify command runs on, and example values of the kind's variables."""
    if step.run_on is not None:
        where = (select_hosts(inventory, step.run_on.run_from) if step.run_on.run_from else []) or hosts
        return f"run_on: one (the first reachable of {fold(where)})", where[:1], None
    if step.launch is not None:
        launchers = select_hosts(inventory, step.launch.launcher)
        split = ", split until the slow hosts are named" if step.launch.split else ""
        return (
            f"launch: one job from {fold(launchers[:1])} over the hosts{split}",
            launchers[:1],
            lambda h: launch_variables(hosts, lambda x: host_vars(inventory, x)),
        )
    if step.pairs is not None:

        def example(h: str) -> dict[str, Any]:  # as for the host's first pair on its first rail
            nics = host_vars(inventory, h).get("compute_nics") or [{}]
            peer = next((p for p in hosts if p != h), h)
            return {
                "nic": nics[0],
                "peer_nic": nics[0],
                "rail": nics[0].get("rail"),
                "port": 18515 + int(nics[0].get("rail") or 0),
                "peer": {
                    **host_vars(inventory, peer),
                    "name": peer,
                    "address": inventory.hosts[peer].address,
                },
            }

        server = step.pairs.server
        if hosts:  # as it runs for the first host's first pair, like the verify command below
            try:
                server = render_command(server, {**host_vars(inventory, hosts[0]), **example(hosts[0])})
            except TemplateError:
                pass  # the verify's commands say what cannot be filled in
        return (
            f"pairs: {step.pairs.plan} plan, at most {step.pairs.concurrency} tests at once"
            + (
                f" ({step.pairs.cross_leaf} out of and into each leaf)"
                if step.pairs.cross_leaf is not None
                else ""
            )
            + "; "
            f"server: {server} (ready: /{step.pairs.ready}/)",
            hosts,
            example,
        )
    return "", hosts, None


def step_plan(step: Step, inventory: Inventory, limit: list[str] | None = None) -> dict[str, Any]:
    hosts = targets(step, inventory, limit)
    kind, runs_on, extra = _kind(step, inventory, hosts)
    return {
        "kind": kind,
        "id": step.id,
        "title": step.title,
        "phase": step.phase,
        "why": step.why,
        "hosts": fold(hosts),
        "host_count": len(hosts),
        "needs": list(step.needs),
        "manual": step.manual,
        "checklist": list(step.checklist),
        "verify": _action(step.verify, runs_on, inventory, extra),
        "apply": _action(step.apply, hosts, inventory),
        "rollback": _action(step.rollback, hosts, inventory),
        "hints": list(step.hints),
        "sha256": step.sha256,
        "source": f"{step.file}:{step.line}",
    }


def build_plan(
    runbook: Runbook,
    inventory: Inventory,
    *,
    step_ids: list[str] | None = None,
    limit: list[str] | None = None,
) -> dict[str, Any]:
    chosen = {s.id for s in ordered(runbook, step_ids)}
    phases = []
    for phase in runbook.phases:
        steps = [step_plan(s, inventory, limit) for s in phase.steps if s.id in chosen]
        if steps:
            phases.append({"phase": phase.name, "title": phase.title, "file": phase.file, "steps": steps})
    site = ""
    if inventory.hosts:
        site = str(host_vars(inventory, next(iter(inventory.hosts))).get("site", ""))
    return {
        "site": site,
        "runbook_sha256": runbook.sha256,
        "inventory_sha256": inventory.sha256,
        "hosts": fold(list(inventory.hosts)),
        "phases": phases,
    }
