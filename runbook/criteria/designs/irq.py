"""IRQ affinity against the MEASURED topology: every interrupt of every RDMA
device may only run on the CPUs local to the device's own NUMA node (the
kernel's local_cpulist). The design is not consulted: when the NIC sits in the
other socket, its interrupts must follow it (nic-numa-affinity reports the
difference from the design)."""
from __future__ import annotations

from typing import Any

from ..design import Comparator
from ._util import examples


def irq_affinity(record: Any, v: dict) -> list[str]:
    devices = record["devices"]
    out = []
    for dev in v["ib_mode_devices"]:
        d = devices.get(dev)
        if d is None or not d["local_cpus"]:
            out.append(f"{dev}: no numa_node/local_cpulist in sysfs (device missing?)")
            continue
        if not d["irqs"]:
            out.append(f"{dev}: no MSI-X interrupts listed (driver not bound?)")
            continue
        local = set(d["local_cpus"])
        wrong = [f"{irq}→{d['irqs'][irq] or '?'}" for irq in d["irqs"]
                 if not d["irq_cpus"][irq] or not set(d["irq_cpus"][irq]) <= local]
        if wrong:
            out.append(f"{dev} (NUMA node {d['numa_node']}, CPUs {d['local_cpulist']}): {len(wrong)} of "
                       f"{len(d['irqs'])} IRQs may run outside it: {examples(wrong, 3)}")
    return out


COMPARATORS = [Comparator("irq-affinity", "host", irq_affinity,
                          "every NIC interrupt pinned to CPUs of the NIC's own NUMA node")]
