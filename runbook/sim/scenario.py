"""Scenario files: which node gets which faults.

    description: optional text
    faults:
      gpu07: [link_type_eth]
      gpu21: [{pcie_x8: gpu3}]        # a fault with its target
      "gpu[30-31]": [clock_skew]      # ClusterShell node sets are fine

Problems are reported as FILE:LINE: message, all of them at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ClusterShell.NodeSet import NodeSet, NodeSetParseError

from ..errors import InputError, Problem
from ..yamlsafe import LineDict, LineList, load_file
from .cluster import Cluster
from .faults import MENU, FaultError, inject, inject_switch

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
        raise InputError(
            Problem(src, getattr(data, "line", 1), "a scenario is a mapping with a 'faults' key")
        )
    for key in data:
        if key not in ("faults", "description"):
            problems.append(
                Problem(src, data.line_of(key), f"unknown key {key!r} (expected: faults, description)")
            )
    faults = data.get("faults") or {}
    if not isinstance(faults, dict):
        problems.append(
            Problem(src, data.line_of("faults"), "faults: expected a mapping of node -> [fault, ...]")
        )
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
                ((fault, arg),) = item.items()
                arg = None if arg is None else str(arg)
            elif isinstance(item, str):
                fault, arg = item, None
            else:
                problems.append(
                    Problem(src, iline, f"{key}: a fault is a name or {{name: target}}, got {item!r}")
                )
                continue
            if fault not in MENU:
                problems.append(Problem(src, iline, f"unknown fault {fault!r} (known: {', '.join(MENU)})"))
                continue
            for name in names:
                entries.append(Entry(name, fault, arg, iline))
    return src, entries, problems


def apply(
    cluster: Cluster, path: str | Path, strict: bool = True, switches_only: bool = False
) -> list[Entry]:
    """Inject a scenario into a freshly built cluster. With strict=False, entries
    for nodes beyond the cluster's size are skipped (the built-in demo scenario
    on a small --nodes); every other problem is an InputError. A name that is
    not in the cluster but differs from one only by zero-padding (gpu07 and
    gpu0007) is that node: faults are placed by position. A switch of the
    fabric (leaf02) takes the switch faults (faults.SWITCH_FAULTS); those live
    in the fabric, not in the saved node state, so a lab restarted from its
    saved state applies them again (switches_only)."""
    src, entries, problems = load(path)
    applied = []
    numbered = _by_number(cluster)
    for e in entries:
        if e.node in cluster.fabric.switches and e.node not in cluster.nodes:
            try:
                inject_switch(cluster, e.node, e.fault, e.arg)
                applied.append(e)
            except FaultError as exc:
                problems.append(Problem(src, e.line, f"{e.fault} on {e.node}: {exc}"))
            continue
        if switches_only:
            continue
        node = cluster.nodes.get(e.node) or numbered.get(_number_key(e.node))
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
    if problems and not switches_only:
        raise InputError(problems)
    return applied


# A fault is placed by the node's position: `gpu07` in a scenario is the 7th
# compute node, which a 1,000-node lab names gpu0007 (naming.compute_names).
_NUMBERED = re.compile(r"([A-Za-z_-]+?)0*(\d+)")


def _number_key(name: str) -> tuple[str, int] | None:
    m = _NUMBERED.fullmatch(name)
    return (m.group(1), int(m.group(2))) if m else None


def _by_number(cluster: Cluster) -> dict:
    out = {}
    for name, node in cluster.nodes.items():
        key = _number_key(name)
        if key is not None:
            out.setdefault(key, node)
    return out
