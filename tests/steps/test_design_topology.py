"""gpu-numa, gpu-nic-topology, nic-numa and irq-affinity on real outputs and
on hand-made mismatches."""

from __future__ import annotations

import copy

import pytest

from runbook import parsers
from runbook.criteria.design import comparators

from .helpers import parse_fixture


def compare(name, record, variables):
    return comparators()[name].func(record, variables)


# 4x RTX 6000 Ada, two sockets, two dual-port NICs, one per socket (real output)
ADA = {
    "gpu_numa": [0, 0, 1, 1],
    "compute_nics": [
        {"dev": "mlx5_0", "rail": 1, "numa": 0, "gpus": [0, 1]},
        {"dev": "mlx5_2", "rail": 2, "numa": 1, "gpus": [2, 3]},
    ],
    "nic_gpu_relation": ["NODE"],
}


def test_real_topology_as_designed_passes():
    record = parse_fixture("nvidia-smi-topo", "nvidia-smi-topo-m/4xRTX6000Ada")
    assert compare("gpu-nic-topology", record, ADA) == []
    assert compare("gpu-numa", record, ADA) == []


def test_real_topology_names_every_cell_that_differs():
    record = parse_fixture("nvidia-smi-topo", "nvidia-smi-topo-m/4xRTX6000Ada")
    design = dict(ADA, nic_gpu_relation=["PIX", "PXB"], gpu_numa=[0, 0, 1, 0])
    assert compare("gpu-nic-topology", record, design) == [
        "GPU3 NUMA: expected 0, found 1",
        "mlx5_0 vs GPU0: expected PIX/PXB, found NODE",
        "mlx5_0 vs GPU1: expected PIX/PXB, found NODE",
        "mlx5_2 vs GPU2: expected PIX/PXB, found NODE",
        "mlx5_2 vs GPU3: expected PIX/PXB, found NODE",
    ]
    assert compare("gpu-numa", record, design) == ["GPU3 NUMA: expected 0, found 1"]


def test_real_topology_nic_on_the_wrong_socket_is_sys():
    record = parse_fixture("nvidia-smi-topo", "nvidia-smi-topo-m/8xRTXA6000")
    design = {
        "gpu_numa": [0, 0, 0, 0, 1, 1, 1, 1],
        "nic_gpu_relation": ["PIX", "PXB", "PHB"],
        "compute_nics": [{"dev": "mlx5_0", "gpus": [0, 6]}, {"dev": "mlx5_7", "gpus": [1]}],
    }
    assert compare("gpu-nic-topology", record, design) == [
        "mlx5_0 vs GPU0: expected PIX/PXB/PHB, found SYS",
        "mlx5_7: not in nvidia-smi topo -m (no NIC row/column for it)",
    ]


def test_old_driver_matrix_without_legend_reads_device_columns():
    # TAB-separated, NIC columns named mlx5_N, both GPUs on NUMA node 1
    record = parse_fixture("nvidia-smi-topo", "nvidia-smi-topo-m/2xA100")
    design = {
        "gpu_numa": [1, 1],
        "nic_gpu_relation": ["PIX", "PXB"],
        "compute_nics": [
            {"dev": "mlx5_6", "gpus": [0, 1]},
            {"dev": "mlx5_0", "gpus": [0]},
            {"dev": "mlx5_4", "gpus": [1]},
        ],
    }
    assert compare("gpu-nic-topology", record, design) == [
        "mlx5_0 vs GPU0: expected PIX/PXB, found SYS",
        "mlx5_4 vs GPU1: expected PIX/PXB, found NODE",
    ]
    assert compare("gpu-numa", record, {"gpu_numa": [0, 1]}) == ["GPU0 NUMA: expected 0, found 1"]


def test_gpu_numa_unknown_when_topo_shows_no_affinity():
    record = parse_fixture("nvidia-smi-topo", "nvidia-smi-topo-m/4xRTX6000Ada")
    record = copy.deepcopy(record)
    record["gpus"][1]["numa"], record["gpus"][1]["numa_affinity"] = None, "N/A"
    with pytest.raises(ValueError, match="GPU1"):
        compare("gpu-numa", record, ADA)


def test_gpu_missing_from_topology():
    record = copy.deepcopy(parse_fixture("nvidia-smi-topo", "nvidia-smi-topo-m/4xRTX6000Ada"))
    del record["gpus"][3]
    assert compare("gpu-numa", record, ADA) == [
        "GPU count: expected 4, found 3",
        "GPU3: not in nvidia-smi topo -m (expected on NUMA 1)",
    ]


SEED_NICS = {
    "compute_nics": [{"dev": "mlx5_0", "numa": 0}, {"dev": "mlx5_2", "numa": 1}],
    "storage_nics": [{"dev": "mlx5_4", "numa": 0}],
}


def test_nic_numa_real_sysfs_and_mismatch():
    record = parse_fixture("sysfs-numa-node", "sysfs-infiniband-numa_node/CX4Lx-mlx5_0")
    assert compare("nic-numa", record, {"compute_nics": [{"dev": "mlx5_0", "numa": 0}]}) == []
    grep = (
        "/sys/class/infiniband/mlx5_0/device/numa_node:0\n/sys/class/infiniband/mlx5_2/device/numa_node:0\n"
    )
    record = parsers.parse("sysfs-numa-node", grep)
    assert compare("nic-numa", record, SEED_NICS) == [
        "mlx5_2 NUMA: expected 1, found 0",
        "mlx5_4: no numa_node in the output (device missing?)",
    ]


IRQ_DESIGN = {"ib_mode_devices": ["mlx5_0", "mlx5_2"]}


STOPPED = ["irqbalance active inactive enabled disabled", "irqbalance args"]


def _irqs(mlx5_2_lists: list[str], head: list[str] = STOPPED) -> dict:
    lines = head + [
        "mlx5_0 numa_node 0 local_cpulist 0-31,64-95",
        "mlx5_0 irq 120 0-31,64-95",
        "mlx5_0 irq 121 3",
        "mlx5_2 numa_node 1 local_cpulist 32-63,96-127",
    ]
    lines += [f"mlx5_2 irq {140 + i} {cpus}" for i, cpus in enumerate(mlx5_2_lists)]
    return parsers.parse("irq-affinity", "\n".join(lines) + "\n")


def test_irq_affinity_subset_of_the_measured_node_passes():
    assert compare("irq-affinity", _irqs(["32-63,96-127", "40", "97"]), IRQ_DESIGN) == []


def test_irq_affinity_names_the_irqs_outside_the_node():
    problems = compare("irq-affinity", _irqs(["0-31,64-95", "40", "5", "32-64"]), IRQ_DESIGN)
    assert problems == [
        "mlx5_2 (NUMA node 1, CPUs 32-63,96-127): 3 of 4 IRQs may run outside it: "
        "140→0-31,64-95, 142→5, 143→32-64"
    ]


def test_irq_affinity_device_without_sysfs_or_irqs():
    record = parsers.parse(
        "irq-affinity",
        "irqbalance active inactive enabled disabled\nirqbalance args\n"
        "mlx5_0 numa_node 0 local_cpulist 0-3\nmlx5_2 numa_node  local_cpulist \n",
    )
    assert compare("irq-affinity", record, IRQ_DESIGN) == [
        "mlx5_0: no MSI-X interrupts listed (driver not bound?)",
        "mlx5_2: no numa_node/local_cpulist in sysfs (device missing?)",
    ]


BAN = dict(IRQ_DESIGN, irqbalance_policy="ban", irqbalance_policyscript="/usr/local/sbin/ban-mlx5.sh")


def test_irqbalance_running_unbanned_fails_banned_passes():
    running = ["irqbalance active active enabled enabled", "irqbalance args"]
    assert compare("irq-affinity", _irqs(["40"], running), BAN) == [
        "irqbalance is active and does not leave the NIC interrupts alone (IRQBALANCE_ARGS=unset; the design "
        "bans them: --policyscript=/usr/local/sbin/ban-mlx5.sh): it moves them at its next pass"
    ]
    banned = [
        "irqbalance active active enabled enabled",
        'irqbalance args IRQBALANCE_ARGS="--policyscript=/usr/local/sbin/ban-mlx5.sh"',
    ]
    assert compare("irq-affinity", _irqs(["40"], banned), BAN) == []
    every_irq = [
        "irqbalance active active enabled enabled",
        "irqbalance args IRQBALANCE_ARGS=--banirq=120 --banirq=121 --banirq=140",
    ]
    assert compare("irq-affinity", _irqs(["40"], every_irq), BAN) == []
    one_missing = ["irqbalance active active enabled enabled", "irqbalance args IRQBALANCE_ARGS=--banirq=120"]
    assert compare("irq-affinity", _irqs(["40"], one_missing), BAN)[0].startswith("irqbalance is active")


def test_irqbalance_policy_stop_wants_it_stopped_and_disabled():
    stop = dict(IRQ_DESIGN, irqbalance_policy="stop")
    assert compare("irq-affinity", _irqs(["40"]), stop) == []
    enabled_only = ["irqbalance active inactive enabled enabled", "irqbalance args"]
    assert compare("irq-affinity", _irqs(["40"], enabled_only), stop) == [
        "irqbalance is inactive/enabled, the design stops it (irqbalance_policy: stop): it would move the "
        "pinned NIC interrupts at its next pass"
    ]


def test_irq_listing_without_irqbalance_state_is_unknown_not_pass():
    with pytest.raises(ValueError, match="no irqbalance state"):
        compare("irq-affinity", _irqs(["40"], []), BAN)


def test_irq_pinning_must_survive_a_boot():
    unit = dict(IRQ_DESIGN, irq_affinity_unit="nic-irq-affinity")
    enabled = STOPPED + ["boot unit nic-irq-affinity enabled"]
    assert compare("irq-affinity", _irqs(["40"], enabled), unit) == []
    missing = STOPPED + ["boot unit nic-irq-affinity "]
    assert compare("irq-affinity", _irqs(["40"], missing), unit) == [
        "boot-time unit nic-irq-affinity: not installed, expected enabled (the pinning is lost at the next boot)"
    ]
    with pytest.raises(ValueError, match="boot-time unit"):
        compare("irq-affinity", _irqs(["40"]), unit)
