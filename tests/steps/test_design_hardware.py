"""PCIe links, GPU inventory, DIMMs, NIC mode: real outputs and mismatches."""

from __future__ import annotations

import copy

import pytest

from runbook import parsers
from runbook.criteria.design import comparators

from .helpers import parse_fixture


def compare(name, record, variables):
    return comparators()[name].func(record, variables)


NIC = {"pcie_nic_speed": "32GT/s", "pcie_nic_width": "x16", "mellanox_functions": 1}
GPU = {"pcie_gpu_speed": "16GT/s", "pcie_gpu_width": "x16", "gpus_per_node": 1}


def test_pcie_real_connectx7_as_designed():
    record = parse_fixture("lspci-vv", "lspci-vv/ConnectX-7")
    assert compare("pcie-link-nic", record, NIC) == []


def test_pcie_gen5_card_in_designed_gen4_slot_is_as_designed():
    record = copy.deepcopy(parse_fixture("lspci-vv", "lspci-vv/ConnectX-7"))
    record["devices"][0]["lnksta"].update(speed="16GT/s", speed_gts=16.0, downgraded=True)
    assert compare("pcie-link-nic", record, dict(NIC, pcie_nic_speed="16GT/s")) == []


def test_pcie_real_idle_gpu_at_2_5gts_passes_width_and_capability():
    # A real idle AD102: LnkSta "Speed 2.5GT/s (downgraded), Width x16", LnkCap 16GT/s x16.
    record = parse_fixture("lspci-vv", "lspci-vv/RTX6000Ada")
    assert record["devices"][0]["lnksta"]["speed"] == "2.5GT/s"
    assert compare("pcie-link-gpu", record, GPU) == []


def test_pcie_idle_gpu_at_x8_or_with_a_gen3_capability_fails():
    record = copy.deepcopy(parse_fixture("lspci-vv", "lspci-vv/RTX6000Ada"))
    record["devices"][0]["lnksta"].update(width="x8", lanes=8, downgraded=True)
    assert compare("pcie-link-gpu", record, GPU) == [
        "01:00.0 RTX 6000 Ada Generation: LnkSta width expected x16, found x8 (downgraded) "
        "(speed 2.5GT/s; LnkCap 16GT/s x16)"
    ]
    record = copy.deepcopy(parse_fixture("lspci-vv", "lspci-vv/RTX6000Ada"))
    record["devices"][0]["lnkcap"].update(speed="8GT/s", speed_gts=8.0)
    assert compare("pcie-link-gpu", record, GPU) == [
        "01:00.0 RTX 6000 Ada Generation: LnkCap expected 16GT/s x16, found 8GT/s x16"
    ]


H2D = {"pcie_gpu_h2d_min_gbs": 20, "gpus_per_node": 2}


def _h2d(values):
    text = (
        "Running host_to_device_memcpy_ce.\nmemcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
        "          0         1\n0" + "".join(f"{v:>10.2f}" for v in values) + "\n"
    )
    return parsers.parse("nvbandwidth", text)


def test_pcie_bandwidth_under_load_judges_each_gpu():
    assert compare("pcie-bandwidth-gpu", _h2d([25.9, 26.1]), H2D) == []
    assert compare("pcie-bandwidth-gpu", _h2d([25.9, 12.4]), H2D) == [
        "GPU 1: host-to-device 12.4 GB/s, expected ≥ 20 (a link at Gen3 or x8 under load carries about half)"
    ]
    assert (
        compare("pcie-bandwidth-gpu", _h2d([25.9, 26.0]), dict(H2D, gpus_per_node=8))[0]
        == "GPUs measured: expected 8, found 2"
    )


def test_pcie_bandwidth_without_the_h2d_testcase_is_unknown():
    record = parse_fixture("nvbandwidth", "nvbandwidth/nvbandwidth-v0.4.2")
    with pytest.raises(ValueError, match="host_to_device_memcpy_ce"):
        compare("pcie-bandwidth-gpu", record, H2D)


def test_pcie_width_x8_and_missing_device():
    record = copy.deepcopy(parse_fixture("lspci-vv", "lspci-vv/ConnectX-7"))
    record["devices"][0]["lnksta"].update(width="x8", lanes=8)
    problems = compare("pcie-link-nic", record, dict(NIC, mellanox_functions=2))
    assert problems[0] == "Mellanox functions: expected 2 devices, found 1"
    assert "found 32GT/s x8" in problems[1]


def test_pcie_access_denied_is_unknown_not_pass():
    record = copy.deepcopy(parse_fixture("lspci-vv", "lspci-vv/ConnectX-7"))
    record["devices"][0].update(lnksta=None, capabilities_access_denied=True)
    with pytest.raises(ValueError, match="root"):
        compare("pcie-link-nic", record, NIC)


L40S = {"gpu_pci_id": "10de:26b9", "gpus_per_node": 8, "gpu_model": "NVIDIA L40S"}
LSPCI_NN = "".join(
    f"{b}:00.0 3D controller [0302]: NVIDIA Corporation AD102GL [L40S] [10de:26b9] (rev a1)\n"
    for b in ("19", "1a", "1b", "1c", "99", "9a", "9b", "9c")
)


def test_gpu_inventory_by_pci_id():
    assert compare("gpu-inventory", parsers.parse("lspci", LSPCI_NN), L40S) == []
    lines = LSPCI_NN.splitlines()
    seven = "\n".join(
        lines[:7] + ["9c:00.0 3D controller [0302]: NVIDIA Corporation GA100 [A100] [10de:20b0]"]
    )
    assert compare("gpu-inventory", parsers.parse("lspci", seven), L40S) == [
        "expected 8 x 10de:26b9 (NVIDIA L40S), found 7; other NVIDIA functions: 9c:00.0 [10de:20b0] A100"
    ]
    assert compare("gpu-inventory", parsers.parse("lspci", ""), L40S) == [
        "expected 8 x 10de:26b9 (NVIDIA L40S), found 0"
    ]


def test_gpu_inventory_without_ids_is_unknown():
    record = parse_fixture("lspci", "lspci-grep-nvidia/AWS-g6e")  # real 8 x L40S, printed without -nn
    assert record["count"] == 12
    with pytest.raises(ValueError, match="-nn"):
        compare("gpu-inventory", record, L40S)


DESKTOP = {"dimm_count": 2, "dimm_size_gb": 8, "memory_total_gb": 16}


def test_dimms_real_output_as_designed_and_not():
    record = parse_fixture("dmidecode-memory", "dmidecode-t-memory/Desktop")
    assert compare("dimm-population", record, DESKTOP) == []
    assert compare(
        "dimm-population", record, {"dimm_count": 4, "dimm_size_gb": 16, "memory_total_gb": 64}
    ) == [
        "populated DIMMs: expected 4, found 2",
        "total memory: expected 64 GB, found 16 GB",
        "DIMM size: expected 16 GB each, found ChannelA-DIMM0 8 GB, ChannelB-DIMM0 8 GB",
    ]


def test_dimms_empty_slot_is_named():
    record = copy.deepcopy(parse_fixture("dmidecode-memory", "dmidecode-t-memory/Desktop"))
    record["devices"][1]["size_mb"] = None
    record["populated"], record["total_mb"] = 1, 8192
    assert compare("dimm-population", record, DESKTOP) == [
        "populated DIMMs: expected 2, found 1; empty slots: ChannelB-DIMM0",
        "total memory: expected 16 GB, found 8 GB",
    ]


def _mlx(dev: str, param: str, current: str, nxt: str) -> str:
    return (
        f"\nDevice #1:\n----------\n\nDevice type:    ConnectX7\nDevice:         {dev}\n\n"
        f"Configurations:                              Default         Current         Next Boot\n"
        f"         {param:<36}ETH(2)          {current:<16}{nxt}\n"
    )


MODE = {"ib_mode_devices": ["mlx5_0", "mlx5_5", "mlx5_6"], "ib_mode_port2_devices": ["mlx5_6"]}


def test_link_type_all_ib_passes_and_eth_is_named():
    ok = (
        _mlx("mlx5_0", "LINK_TYPE_P1", "IB(1)", "IB(1)")
        + _mlx("mlx5_5", "LINK_TYPE_P1", "IB(1)", "IB(1)")
        + _mlx("mlx5_6", "LINK_TYPE_P1", "IB(1)", "IB(1)")
        + _mlx("mlx5_6", "LINK_TYPE_P2", "IB(1)", "IB(1)")
    )
    assert compare("link-type-ib", parsers.parse("mlxconfig-per-device", ok), MODE) == []
    text = (
        _mlx("mlx5_0", "LINK_TYPE_P1", "ETH(2)", "ETH(2)")
        + _mlx("mlx5_5", "LINK_TYPE_P1", "IB(1)", "IB(1)")
        + _mlx("mlx5_6", "LINK_TYPE_P1", "IB(1)", "IB(1)")
        + _mlx("mlx5_6", "LINK_TYPE_P2", "ETH(2)", "IB(1)")
    )
    assert compare("link-type-ib", parsers.parse("mlxconfig-per-device", text), MODE) == [
        "mlx5_0 LINK_TYPE_P1: expected IB(1), found ETH(2)",
        "mlx5_6 LINK_TYPE_P2: expected IB(1), found ETH(2) (IB(1) is set for the next boot: a reboot is owed;"
        " if the node has rebooted since, the warm reboot did not reset the card's firmware: the apply resets"
        " it with mlxfwreset, or a power cycle is owed)",
    ]


def test_link_type_device_that_did_not_answer():
    text = _mlx("mlx5_0", "LINK_TYPE_P1", "IB(1)", "IB(1)") + "-E- Failed to open the device\n"
    problems = compare("link-type-ib", parsers.parse("mlxconfig-per-device", text), MODE)
    assert problems[0] == "mlx5_5 LINK_TYPE_P1: no answer from mlxconfig (Failed to open the device)"
    assert len(problems) == 3


def test_link_layer_real_ethernet_port_fails():
    record = parse_fixture("sysfs-link-layer", "sysfs-infiniband-link_layer/mlx5_0")
    assert compare("ib-link-layer", record, {"ib_mode_devices": ["mlx5_0", "mlx5_1"]}) == [
        "mlx5_0 port 1 link_layer: expected InfiniBand, found Ethernet",
        "mlx5_1 port 1: no link_layer in the output (device missing?)",
    ]
    grep = "/sys/class/infiniband/mlx5_0/ports/1/link_layer:InfiniBand\n"
    assert (
        compare("ib-link-layer", parsers.parse("sysfs-link-layer", grep), {"ib_mode_devices": ["mlx5_0"]})
        == []
    )
