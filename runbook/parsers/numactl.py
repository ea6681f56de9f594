"""`numactl -H` / `numactl --hardware`: NUMA nodes, their CPUs and memory, distances.

Record:
  numa_available: false only for "No NUMA available on this system"
  node_count (from "available: N nodes"), node_ids
  nodes: [{id, cpus: [...], cpu_count, size_mb, free_mb}]
  cpuless_nodes: ids of memory-only nodes (CXL expanders, HBM)
  distances: {"0": {"0": 10, "1": 21}, ...}     keys are node ids as strings
Survives the "node 0 size: ... node 0 free: ..." joined line of mangled pastes.
"""

from __future__ import annotations

import re

from ._hosttext import fail, lines_of
from .base import ParseError, Parser, Record

_AVAILABLE = re.compile(r"^available:\s*(\d+)\s+nodes?\b")
_FIELD = re.compile(r"node (\d+) (cpus|size|free):")


def parse_numactl(text: str) -> Record:
    lines = lines_of(text)
    if any("No NUMA available" in ln for ln in lines):
        return {
            "numa_available": False,
            "node_count": 0,
            "node_ids": [],
            "nodes": [],
            "cpuless_nodes": [],
            "distances": {},
        }
    count_line = next((m for m in map(_AVAILABLE.match, (ln.strip() for ln in lines)) if m), None)
    if count_line is None:
        fail("`numactl -H` output starting 'available: N nodes (...)'", text)
    nodes: dict[int, Record] = {}
    distances: dict[str, dict[str, int]] = {}
    columns: list[str] | None = None
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("node distances"):
            columns = []
            continue
        if columns is not None:
            if stripped.startswith("node "):
                columns = stripped.split()[1:]
            elif re.match(r"^\d+:", stripped):
                row, _, values = stripped.partition(":")
                numbers = values.split()
                if len(numbers) != len(columns):
                    raise ParseError(
                        f"numactl -H: distance row {stripped!r} does not match the header {columns}"
                    )
                distances[row] = {c: int(v) for c, v in zip(columns, numbers)}
            continue
        # A mangled paste may join several "node N field:" items on one line.
        starts = [m.start() for m in _FIELD.finditer(line)]
        for a, b in zip(starts, starts[1:] + [len(line)]):
            m = _FIELD.match(line, a)
            node = nodes.setdefault(
                int(m.group(1)),
                {"id": int(m.group(1)), "cpus": [], "cpu_count": 0, "size_mb": None, "free_mb": None},
            )
            value = line[m.end() : b].strip()
            if m.group(2) == "cpus":
                node["cpus"] = [int(c) for c in value.split()]
                node["cpu_count"] = len(node["cpus"])
            else:
                mb = re.fullmatch(r"(\d+) MB", value)
                if not mb:
                    raise ParseError(
                        f"numactl -H: expected 'node {node['id']} {m.group(2)}: N MB', found {line.strip()!r}"
                    )
                node[f"{m.group(2)}_mb"] = int(mb.group(1))
    if len(nodes) != int(count_line.group(1)):
        raise ParseError(
            f"numactl -H: 'available: {count_line.group(1)} nodes' but "
            f"{len(nodes)} node descriptions were found"
        )
    ordered = [nodes[i] for i in sorted(nodes)]
    return {
        "numa_available": True,
        "node_count": len(ordered),
        "node_ids": [n["id"] for n in ordered],
        "nodes": ordered,
        "cpuless_nodes": [n["id"] for n in ordered if not n["cpus"]],
        "distances": distances,
    }


PARSERS = [
    Parser(
        name="numactl",
        reads="numactl -H",
        func=parse_numactl,
        description="NUMA nodes with their CPUs, memory sizes and the distance matrix",
    )
]
