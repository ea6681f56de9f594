"""Each NIC's measured NUMA node (sysfs numa_node) against compute_nics /
storage_nics in the inventory."""
from __future__ import annotations

from typing import Any

from ..design import Comparator


def nic_numa(record: Any, v: dict) -> list[str]:
    found = record["by_device"]
    out = []
    for nic in list(v.get("compute_nics", [])) + list(v.get("storage_nics", [])):
        dev, want = nic["dev"], int(nic["numa"])
        got = found.get(dev)
        if got is None:
            out.append(f"{dev}: no numa_node in the output (device missing?)")
        elif got != want:
            note = " (the kernel reports no NUMA affinity)" if got == -1 else ""
            out.append(f"{dev} NUMA: expected {want}, found {got}{note}")
    return out


COMPARATORS = [Comparator("nic-numa", "host", nic_numa, "each NIC on the NUMA node of compute_nics/storage_nics")]
