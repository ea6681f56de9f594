"""nccl-debug on every real NCCL_DEBUG=INFO capture (all published fragments)."""

from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse

from .helpers import check_fixture, read

DIRECTORY = "nccl-debug"
EXPECTED = {
    "NCCL2.27.5-2node-16rank-RoCE-Channel-lines-via-NET-IB-N-GDRDMA-send-receive-and-P2P-IPC-Proxy-Progress-fragment.txt": {
        "hosts": ["tpgds-aihub0008"],
        "net_channels": 8,
        "gdrdma": True,
        "transports": ["NET/IB/GDRDMA", "P2P/IPC"],
        "nccl_version": None,
        "channels.0": {
            "host": "tpgds-aihub0008",
            "channel": 4,
            "from_rank": 13,
            "to_rank": 4,
            "direction": "send",
            "transport": "NET/IB/5/GDRDMA",
            "kind": "NET",
            "net": "IB",
            "net_device": 5,
            "gdrdma": True,
        },
        "channels.5.direction": "receive",
        "channels.5.net_device": 0,
        "channels.7.kind": "P2P",
        "channels.7.direction": None,
        "channels.7.gdrdma": False,
    },
    "NCCL2.27.6-cuda13.0-2xH100-VM-nccl-tests-header-interleaved-SOCKET_IFNAME-Bootstrap-enp9s0np0-Could-not-find-libnccl-net-fragment.txt": {
        "nccl_version": "2.27.6+cuda13.0",
        "nccl_versions": ["2.27.6+cuda13.0"],
        "hosts": ["cl4-gpu03-vm", "cl4-gpu04-vm"],
        "env": {"NCCL_SOCKET_IFNAME": "enp9s0np0"},
        "bootstrap": [
            {"interface": "enp9s0np0", "address": "10.99.0.2"},
            {"interface": "enp9s0np0", "address": "10.99.0.12"},
        ],
        "net_plugin_found": False,
        "gdrdma": None,
        "channels": [],
    },
    "NCCL2.5.6-cuda10.0-IB-mlx5_0-OOB-ib0-old-format-space-before-semicolon-No-plugin-found-2-nodes-fragment.txt": {
        "nccl_version": "2.5.6+cuda10.0",
        "hosts": ["master_node", "secondary_node"],
        "ib_devices": [{"index": 0, "device": "mlx5_0", "port": 1, "link_layer": "IB"}],
        "relaxed_ordering": False,
        "oob": {"interface": "ib0", "address": "192.168.11.1"},
        "env": {"NCCL_IB_DISABLE": "0"},
        "net_plugin_found": False,
    },
    "nccl-1537-RoCE-2xmlx5-RO-OOB-GPU-Direct-RDMA-Disabled-for-HCA-0-and-1-peermem-loaded-fragment.txt": {
        "net": "IB",
        "relaxed_ordering": True,
        "oob": {"interface": "primaryip", "address": "10.10.10.10"},
        "ib_devices.1": {"index": 1, "device": "mlx5_1", "port": 1, "link_layer": "RoCE"},
        "gdr_disabled": [{"index": 0, "device": "mlx5_0"}, {"index": 1, "device": "mlx5_1"}],
        "gdr_enabled": [],
        "gdrdma": False,
    },
}
COVERS = {DIRECTORY: EXPECTED}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_output(name):
    check_fixture("nccl-debug", DIRECTORY, name, EXPECTED[name])


def test_a_network_channel_without_gdrdma_is_false():
    text = (
        "gpu01:100:100 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n"
        "gpu01:100:100 [1] NCCL INFO Channel 01/0 : 1[1] -> 9[1] [send] via NET/IB/1\n"
    )
    record = parse("nccl-debug", text)
    assert record["gdrdma"] is False and record["net_channels"] == 2
    assert record["transports"] == ["NET/IB/GDRDMA", "NET/IB"]


def test_rank_labels_and_warnings():
    text = (
        "0: gpu01:100:100 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
        "1: gpu02:200:200 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\n"
        "1: gpu02:200:200 [0] NCCL WARN NET/IB : Got completion from peer with error 12\n"
    )
    record = parse("nccl-debug", text)
    assert record["rank_labels"] == "srun"
    assert record["nccl_versions"] == ["2.21.5+cuda12.4", "2.18.1+cuda12.1"]
    assert record["warnings"] == ["NET/IB : Got completion from peer with error 12"]


def test_nccl_tests_table_alone_is_not_debug_output():
    text = read("nccl-tests", "A40-PCIe-2GPU-NV4-bridge-g2-1G-8G-NCCL2.16-table-only-47GBps.txt")
    with pytest.raises(ParseError, match="NCCL INFO"):
        parse("nccl-debug", text)
