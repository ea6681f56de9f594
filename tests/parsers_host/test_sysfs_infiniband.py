"""sysfs-link-layer / -numa-node / -pkeys / -port-state on every real capture and on
the `grep . /sys/...` shape the runbook's steps use."""

from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse

from .helpers import Raises, check_fixture

LINK = "sysfs-infiniband-link_layer"
NUMA = "sysfs-infiniband-numa_node"
PKEYS = "sysfs-infiniband-pkeys"
STATE = "sysfs-infiniband-port-state"
COVERS = {
    LINK: {
        "mlx5_0-port1-Ethernet-with-command-line.txt": {
            "value": "Ethernet",
            "count": 1,
            "entries.0.device": "mlx5_0",
            "entries.0.port": "1",
            "by_device": {"mlx5_0": {"1": "Ethernet"}},
        },
    },
    NUMA: {
        "CX4Lx-RoCE-LAG-mlx5_bond_0-numa0-with-command-line.txt": {
            "value": 0,
            "by_device": {"mlx5_bond_0": 0},
        },
        "CX4Lx-mlx5_0-numa0-with-command-line.txt": {
            "value": 0,
            "count": 1,
            "entries.0.path": "/sys/class/infiniband/mlx5_0/device/numa_node",
        },
        "CX4Lx-pci-sysfs-numa_node-and-lspci-vv-grep-NUMA-node.txt": {
            "count": 2,
            "value": 0,
            "entries.0.device": "0000:3b:00.0",
            "entries.0.path": "/sys/bus/pci/devices/0000:3b:00.0/numa_node",
            "entries.1.device": "0000:3b:00.0",
            "entries.1.value": 0,
        },
    },
    PKEYS: {
        "Azure-HPC-VM-mlx5_0-pkeys0-0x800b-pkeys1-0x7fff-with-commands.txt": {
            "pkeys": ["0x800b", "0x7fff"],
            "by_index": {"0": "0x800b", "1": "0x7fff"},
            "membership": {"0x000b": "full", "0x7fff": "limited"},
            "entries.0.full": True,
            "entries.1.full": False,
            "entries.0.partition": "0x000b",
            "by_device": {"mlx5_0": {"1": ["0x800b", "0x7fff"]}},
        },
    },
    STATE: {
        # the GID table, saved among the state captures: not a state, must be refused
        "rxe0-soft-RoCE-port1-gids-0-and-1-with-prompts.txt": Raises("gids/0"),
        "rxe0-soft-RoCE-port1-state-4-ACTIVE-with-prompt.txt": {
            "value": "ACTIVE",
            "entries.0.code": 4,
            "entries.0.device": "rxe0",
            "by_device": {"rxe0": {"1": "ACTIVE"}},
        },
    },
}
PARSER_OF = {
    LINK: "sysfs-link-layer",
    NUMA: "sysfs-numa-node",
    PKEYS: "sysfs-pkeys",
    STATE: "sysfs-port-state",
}


@pytest.mark.parametrize("directory,name", [(d, n) for d in COVERS for n in sorted(COVERS[d])])
def test_real_output(directory, name):
    check_fixture(PARSER_OF[directory], directory, name, COVERS[directory][name])


def test_grep_shape_many_ports():
    text = (
        "/sys/class/infiniband/mlx5_0/ports/1/link_layer:InfiniBand\n"
        "/sys/class/infiniband/mlx5_1/ports/1/link_layer:InfiniBand\n"
        "/sys/class/infiniband/mlx5_2/ports/1/link_layer:Ethernet\n"
    )
    record = parse("sysfs-link-layer", text)
    assert record["value"] is None  # they disagree
    assert record["distinct"] == ["Ethernet", "InfiniBand"]
    assert record["by_device"]["mlx5_2"] == {"1": "Ethernet"}


def test_grep_shape_state_value_holds_a_colon():
    text = "/sys/class/infiniband/mlx5_3/ports/1/state:1: DOWN\n"
    entry = parse("sysfs-port-state", text)["entries"][0]
    assert (entry["device"], entry["value"], entry["code"]) == ("mlx5_3", "DOWN", 1)


def test_bare_value_and_no_affinity():
    assert parse("sysfs-link-layer", "InfiniBand\n")["value"] == "InfiniBand"
    assert parse("sysfs-numa-node", "-1\n")["value"] == -1


def test_glob_cat_keeps_values_without_devices():
    record = parse("sysfs-numa-node", "# cat /sys/class/infiniband/*/device/numa_node\n0\n0\n1\n1\n")
    assert [e["value"] for e in record["entries"]] == [0, 0, 1, 1]
    assert record["by_device"] == {} and record["value"] is None


def test_pkeys_full_table_with_design_partitions():
    lines = [
        f"/sys/class/infiniband/mlx5_0/ports/1/pkeys/{i}:{v}"
        for i, v in enumerate(["0xffff", "0x8100", "0x0000", "0x0000"])
    ]
    record = parse("sysfs-pkeys", "\n".join(lines))
    assert record["pkeys"] == ["0xffff", "0x8100"]
    assert record["membership"] == {"0x7fff": "full", "0x0100": "full"}
    assert "0x0200" not in record["membership"]


def test_wrong_values_are_refused():
    with pytest.raises(ParseError, match="InfiniBand, Ethernet or Unknown"):
        parse("sysfs-link-layer", "4: ACTIVE\n")
    with pytest.raises(ParseError, match="reads numa_node"):
        parse("sysfs-numa-node", "/sys/class/infiniband/mlx5_0/ports/1/link_layer:InfiniBand\n")
    with pytest.raises(ParseError, match="PKey"):
        parse("sysfs-pkeys", "InfiniBand\n")
    with pytest.raises(ParseError):
        parse("sysfs-port-state", "")


def test_cat_of_a_pkey_glob_keeps_device_and_port():
    record = parse(
        "sysfs-pkeys", "$ cat /sys/class/infiniband/mlx5_1/ports/1/pkeys/*\n0xffff\n0x8200\n0x0000\n"
    )
    assert record["by_device"] == {"mlx5_1": {"1": ["0xffff", "0x8200"]}}
    assert record["membership"] == {"0x7fff": "full", "0x0200": "full"}
    assert record["by_index"] == {}  # the indices are not in the output
