"""The step kinds beyond "one command per host" (docs/step-kinds.md): `run_on:
one`, `pairs:` and `launch:`, read and checked like the rest of a step."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .model import LaunchSpec, PairsSpec, RunOnOne
from .template import fix_for, unsafe_placeholders

PLANS = ("rail", "cross_rail", "ring", "list")
RUN_ON_KEYS = {"run_from", "items", "item_hosts", "item_name"}
PAIRS_KEYS = {"plan", "server", "ready", "list", "concurrency", "cross_leaf", "ready_timeout", "cleanup"}
LAUNCH_KEYS = {"launcher", "split", "max_parallel"}

Add = Callable[[int | None, str], None]


def _line(node: Any, key: str) -> int:
    return node.line_of(key) if hasattr(node, "line_of") and key in node else getattr(node, "line", 0)


def _unknown(add: Add, node: dict, allowed: set[str], what: str) -> None:
    for key in node:
        if key not in allowed:
            add(_line(node, key), f"unknown key {key!r} in {what} (allowed: {', '.join(sorted(allowed))})")


def _count(add: Add, node: dict, key: str, default: int, what: str) -> int:
    value = node.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        add(_line(node, key), f"{what}.{key} must be a whole number ≥ 1, found {value!r}")
        return default
    return value


def run_on(add: Add, sid: str, node: Any, step: dict) -> RunOnOne | None:
    """`run_on: one` with `judge_each:` {items, hosts, name} and an optional `run_from:`."""
    if node != "one":
        add(_line(step, "run_on"), f"step {sid}: run_on must be `one`, found {node!r}")
        return None
    each = step.get("judge_each")
    run_from = step.get("run_from", "")
    if not isinstance(run_from, str):
        add(_line(step, "run_from"), f"step {sid}: run_from must be a host selector (text)")
        run_from = ""
    if each is None:  # every host judged on the whole record (design comparators find their part)
        return RunOnOne(run_from=run_from)
    if not isinstance(each, dict):
        add(
            _line(step, "judge_each"),
            f"step {sid}: judge_each must be a mapping {{items, hosts, name}} "
            "(which items of the record are judged and which hosts each one is attributed to)",
        )
        return None
    _unknown(add, each, {"items", "hosts", "name", "unseen", "covered"}, f"step {sid}: judge_each")
    unseen, covered = each.get("unseen", "unknown"), each.get("covered", "")
    if unseen not in ("unknown", "pass"):
        add(_line(each, "unseen"), f"step {sid}: judge_each.unseen must be unknown or pass, found {unseen!r}")
        unseen = "unknown"
    if unseen == "pass" and (not isinstance(covered, str) or not covered):
        add(
            _line(each, "unseen"),
            f"step {sid}: judge_each.unseen: pass needs `covered:`, the record's count "
            "of nodes the tool checked (a host passes unseen only when the sweep covered the fleet)",
        )
        unseen = "unknown"
    items, hosts, name = each.get("items"), each.get("hosts"), each.get("name", "")
    if not isinstance(items, str) or not items:
        add(_line(each, "items"), f"step {sid}: judge_each.items must be a path to a list in the record")
        return None
    if isinstance(hosts, str):
        hosts = [hosts]
    if not isinstance(hosts, list) or not hosts or not all(isinstance(h, str) and h for h in hosts):
        add(_line(each, "hosts"), f"step {sid}: judge_each.hosts must list the item's fields that name hosts")
        return None
    return RunOnOne(
        run_from=run_from,
        items=items,
        item_hosts=tuple(hosts),
        item_name=str(name or ""),
        unseen=unseen,
        covered=str(covered or ""),
    )


def pairs(add: Add, sid: str, node: Any) -> PairsSpec | None:
    what = f"step {sid}: pairs"
    if not isinstance(node, dict):
        add(getattr(node, "line", None), f"{what} must be a mapping with plan, server and ready")
        return None
    _unknown(add, node, PAIRS_KEYS, what)
    plan = node.get("plan")
    if plan not in PLANS:
        add(_line(node, "plan"), f"{what}.plan must be one of {', '.join(PLANS)}, found {plan!r}")
        return None
    server = node.get("server")
    if not isinstance(server, str) or not server.strip():
        add(_line(node, "server"), f"{what}.server must be the server side's command")
        return None
    ready = node.get("ready")
    if not isinstance(ready, str) or not ready:
        add(
            _line(node, "ready"),
            f"{what}.ready must be what the server prints once it listens "
            "(a regular expression; the client starts only then, no sleeps)",
        )
        return None
    try:
        re.compile(ready)
    except re.error as exc:
        add(_line(node, "ready"), f"{what}.ready is not a regular expression: {exc}")
        return None
    explicit: list[tuple[str, str]] = []
    raw = node.get("list")
    if plan == "list":
        if (
            not isinstance(raw, list)
            or not raw
            or not all(
                isinstance(p, list) and len(p) == 2 and all(isinstance(h, str) for h in p) for p in raw
            )
        ):
            add(_line(node, "list"), f"{what}.list must be a list of [client, server] host pairs")
            return None
        explicit = [(str(a), str(b)) for a, b in raw]
        if any(a == b for a, b in explicit):
            add(_line(node, "list"), f"{what}.list: a pair needs two different hosts")
            return None
    elif raw is not None:
        add(_line(node, "list"), f"{what}.list is only read with plan: list")
    timeout = node.get("ready_timeout", 30)
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
        add(_line(node, "ready_timeout"), f"{what}.ready_timeout must be a positive number of seconds")
        timeout = 30
    cleanup = node.get("cleanup", "")
    if not isinstance(cleanup, str):
        add(
            _line(node, "cleanup"),
            f"{what}.cleanup must be a command (stops a server left behind, by its port)",
        )
        cleanup = ""
    for key, text in (("server", server), ("cleanup", cleanup)):  # the same rule as every `run:`
        for bad, where, _ in unsafe_placeholders(text):
            add(_line(node, key), f"{what}.{key}: {bad} is {where}: {fix_for(where)}")
    return PairsSpec(
        plan=plan,
        server=server,
        ready=ready,
        pairs=tuple(explicit),
        cleanup=cleanup,
        concurrency=_count(add, node, "concurrency", 8, what),
        cross_leaf=_count(add, node, "cross_leaf", 1, what) if "cross_leaf" in node else None,
        ready_timeout=float(timeout),
    )


def launch(add: Add, sid: str, node: Any) -> LaunchSpec | None:
    what = f"step {sid}: launch"
    if not isinstance(node, dict):
        add(getattr(node, "line", None), f"{what} must be a mapping with `launcher:` (a host selector)")
        return None
    _unknown(add, node, LAUNCH_KEYS, what)
    launcher = node.get("launcher")
    if not isinstance(launcher, str) or not launcher.strip():
        add(_line(node, "launcher"), f"{what}.launcher must be a host selector (the launcher candidates)")
        return None
    split = node.get("split", True)
    if not isinstance(split, bool):
        add(_line(node, "split"), f"{what}.split must be true or false")
        split = True
    return LaunchSpec(launcher=launcher, split=split, max_parallel=_count(add, node, "max_parallel", 8, what))


def launch_variables(hosts: list[str], vars_of: Callable[[str], dict]) -> dict[str, Any]:
    """What a `launch:` job's templates and criteria get for a job over `hosts`:
    launch_hosts, launch_count, and launch_ranks (one rank per GPU: the sum of the
    hosts' gpus_per_node). The engine fills them per job (engine/kinds/launch.py);
    the plan, the TUI and the report show the job over every targeted host."""
    ranks = 0
    for h in hosts:
        try:
            ranks += int((vars_of(h) or {}).get("gpus_per_node") or 0)
        except (TypeError, ValueError):  # an unreadable count is lint's to report
            pass
    return {"launch_hosts": list(hosts), "launch_count": len(hosts), "launch_ranks": ranks}
