"""Each NIC's measured NUMA node (sysfs numa_node) against compute_nics /
storage_nics in the inventory. With `sysfs-numa-node-by-pci` each NIC is found
by its PCI address (a dead card is named at its slot, not through its
renumbered neighbour)."""

from __future__ import annotations

from typing import Any

from ..design import Comparator
from ._util import designed_nics, missing_card


def nic_numa(record: Any, v: dict) -> list[str]:
    found = record["by_device"]
    out = []
    for nic, _, dev, label in designed_nics(record, v):
        want = int(nic["numa"])
        if dev is None:
            out.append(missing_card(label, nic))
            continue
        got = found.get(dev)
        if got is None:
            out.append(f"{label}: no numa_node in the output (device missing?)")
        elif got != want:
            note = " (the kernel reports no NUMA affinity)" if got == -1 else ""
            out.append(f"{label} NUMA: expected {want}, found {got}{note}")
    return out


COMPARATORS = [
    Comparator("nic-numa", "host", nic_numa, "each NIC on the NUMA node of compute_nics/storage_nics")
]
