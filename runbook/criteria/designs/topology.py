"""`nvidia-smi topo -m` against the design: each GPU's NUMA node and each
compute NIC's PCIe relation to the GPUs of its rail (gpu_numa, compute_nics,
nic_gpu_relation in the inventory). Each mismatch names the cell."""

from __future__ import annotations

from typing import Any

from ..design import Comparator
from ._util import designed_nics, missing_card


def _gpu_numa(record: dict, v: dict) -> list[str]:
    design = [int(n) for n in v["gpu_numa"]]
    gpus = {g["index"]: g for g in record["gpus"]}
    out = []
    if len(gpus) != len(design):
        out.append(f"GPU count: expected {len(design)}, found {len(gpus)}")
    for i, want in enumerate(design):
        g = gpus.get(i)
        if g is None:
            out.append(f"GPU{i}: not in nvidia-smi topo -m (expected on NUMA {want})")
            continue
        if g["numa"] is None:
            # one NUMA node, or a driver that does not know: not evidence either way
            raise ValueError(f"GPU{i}: NUMA affinity shown as {g['numa_affinity']!r}, cannot compare")
        if g["numa"] != want:
            out.append(f"GPU{i} NUMA: expected {want}, found {g['numa']}")
    return out


def _nic_relations(record: dict, v: dict) -> list[str]:
    allowed = [str(r) for r in v["nic_gpu_relation"]]
    matrix = record["matrix_by_device"]
    out = []
    # with `nvidia-smi-topo-by-pci` (ibdev2netdev -v first) each NIC is found by its slot
    for nic, _, dev, label in designed_nics(record, v, ("compute",)):
        if dev is None:
            out.append(missing_card(label, nic))
            continue
        row = matrix.get(dev)
        if row is None:
            out.append(f"{label}: not in nvidia-smi topo -m (no NIC row/column for it)")
            continue
        for g in nic["gpus"]:
            cell = row.get(f"GPU{g}")
            if cell is None:
                out.append(f"{label} vs GPU{g}: no such cell")
            elif cell not in allowed:
                out.append(f"{label} vs GPU{g}: expected {'/'.join(allowed)}, found {cell}")
    return out


def gpu_numa(record: Any, v: dict) -> list[str]:
    return _gpu_numa(record, v)


def gpu_nic_topology(record: Any, v: dict) -> list[str]:
    return _gpu_numa(record, v) + _nic_relations(record, v)


COMPARATORS = [
    Comparator("gpu-numa", "host", gpu_numa, "each GPU on the NUMA node of gpu_numa"),
    Comparator(
        "gpu-nic-topology",
        "host",
        gpu_nic_topology,
        "gpu_numa, and each compute NIC's relation to its rail's GPUs in nic_gpu_relation",
    ),
]
