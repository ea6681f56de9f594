"""Scenario files: which node gets which faults.

    description: optional text
    faults:
      gpu07: [link_type_eth]
      gpu21: [{pcie_x8: gpu3}]        # a fault with its target
      "gpu[30-31]": [clock_skew]      # ClusterShell node sets are fine

Problems are reported as FILE:LINE: message, all of them at once.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ClusterShell.NodeSet import NodeSet, NodeSetParseError

from ..errors import InputError, Problem
from ..yamlsafe import LineDict, LineList, load_file
from .cluster import Cluster
from .faults import MENU, FaultError, inject

SCENARIOS = Path(__file__).with_name("scenarios")
DEFAULT = SCENARIOS / "default.yaml"
EMPTY = SCENARIOS / "empty.yaml"


@dataclass
class Entry:
    node: str
    fault: str
    arg: str | None
    line: int


def load(path: str | Path) -> tuple[str, list[Entry], list[Problem]]:
    """Read a scenario; returns (file, entries, problems about the file's own shape)."""
    src = str(path)
    data = load_file(path)
    problems: list[Problem] = []
    entries: list[Entry] = []
    if data is None:
        return src, entries, problems
    if not isinstance(data, dict):
        raise InputError(Problem(src, getattr(data, "line", 1), "a scenario is a mapping with a 'faults' key"))
    for key in data:
        if key not in ("faults", "description"):
            problems.append(Problem(src, data.line_of(key), f"unknown key {key!r} (expected: faults, description)"))
    faults = data.get("faults") or {}
    if not isinstance(faults, dict):
        problems.append(Problem(src, data.line_of("faults"), "faults: expected a mapping of node -> [fault, ...]"))
        return src, entries, problems
    for key, value in faults.items():
        line = faults.line_of(key) if isinstance(faults, LineDict) else 0
        try:
            names = list(NodeSet(str(key)))
        except NodeSetParseError as exc:
            problems.append(Problem(src, line, f"bad node set {key!r}: {exc}"))
            continue
        items = value if isinstance(value, list) else [value]
        for k, item in enumerate(items):
            iline = value.line_of(k) if isinstance(value, LineList) else line
            if isinstance(item, dict) and len(item) == 1:
                (fault, arg), = item.items()
                arg = None if arg is None else str(arg)
            elif isinstance(item, str):
                fault, arg = item, None
            else:
                problems.append(Problem(src, iline, f"{key}: a fault is a name or {{name: target}}, got {item!r}"))
                continue
            if fault not in MENU:
                problems.append(Problem(src, iline, f"unknown fault {fault!r} (known: {', '.join(MENU)})"))
                continue
            for name in names:
                entries.append(Entry(name, fault, arg, iline))
    return src, entries, problems


def apply(cluster: Cluster, path: str | Path, strict: bool = True) -> list[Entry]:
    """Inject a scenario into a freshly built cluster. With strict=False, entries
    for nodes beyond the cluster's size are skipped (the built-in demo scenario
    on a small --nodes); every other problem is an InputError."""
    src, entries, problems = load(path)
    applied = []
    for e in entries:
        node = cluster.nodes.get(e.node)
        if node is None:
            if strict:
                known = NodeSet.fromlist(list(cluster.nodes))
                problems.append(Problem(src, e.line, f"unknown node {e.node!r} (the cluster has {known})"))
            continue
        try:
            inject(cluster, node, e.fault, e.arg)
            applied.append(e)
        except FaultError as exc:
            problems.append(Problem(src, e.line, f"{e.fault} on {e.node}: {exc}"))
    if problems:
        raise InputError(problems)
    return applied
