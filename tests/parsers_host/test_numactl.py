"""numactl on every real `numactl -H` capture."""

from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse

from .helpers import check_fixture, read

DIRECTORY = "numactl-H"
EXPECTED = {
    "2node-96cpu-Intel-HT-siblings-384GB-hadoop-yarn-docs.txt": {
        "node_count": 2,
        "node_ids": [0, 1],
        "nodes.0.cpu_count": 48,
        "nodes.0.cpus": list(range(0, 24)) + list(range(48, 72)),
        "nodes.1.size_mb": 191383,
        "nodes.1.free_mb": 185914,
        "distances.0.1": 21,
        "distances.1.1": 10,
        "cpuless_nodes": [],
    },
    "2node-AMD-Genoa-ASUS-ESC8000A-E12.txt": {
        "node_count": 2,
        "nodes.1.cpus": list(range(32, 64)),
        "nodes.0.size_mb": 193129,
        "nodes.0.free_mb": 186031,
        "distances.1.0": 32,
    },
    "AMD-CXL-memory-cpuless-node1-distance50-joined-line-mangled.txt": {
        "node_count": 2,
        "nodes.0.size_mb": 63678,
        "nodes.0.free_mb": 59542,
        "nodes.0.cpu_count": 17,
        "nodes.1.cpus": [],
        "cpuless_nodes": [1],
        "nodes.1.size_mb": 16122,
        "distances.0.1": 50,
    },
}
COVERS = {DIRECTORY: EXPECTED}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_output(name):
    check_fixture("numactl", DIRECTORY, name, EXPECTED[name])


def test_no_numa_is_a_reading_not_an_error():
    record = parse("numactl", "No NUMA available on this system\n")
    assert record["numa_available"] is False and record["node_count"] == 0


def test_missing_node_is_refused():
    text = read(DIRECTORY, "2node-AMD-Genoa-ASUS-ESC8000A-E12.txt")
    text = "\n".join(ln for ln in text.splitlines() if not ln.startswith("node 1 "))
    with pytest.raises(ParseError, match="'available: 2 nodes' but 1"):
        parse("numactl", text)
