"""The irq-affinity step's listing of every RDMA device's interrupts.

The step prints, per device, where the kernel says the device sits and where
each of its MSI-X interrupts is allowed to run:

    mlx5_0 numa_node 0 local_cpulist 0-31,64-95
    mlx5_0 irq 120 0-31,64-95
    mlx5_0 irq 121 5

(`numa_node` and `local_cpulist` come from /sys/class/infiniband/DEV/device,
the IRQ numbers from its msi_irqs/ directory, the lists from
/proc/irq/N/smp_affinity_list.) A device whose sysfs files were missing prints
empty values; it is kept with nulls so the criterion can name it.

Record:
  devices: {dev: {numa_node, local_cpulist, local_cpus: [...],
                  irqs: {"120": "0-31,64-95"}, irq_cpus: {"120": [...]}}}
  restore: ["120=0-31,64-95", ...]   every IRQ's list as found, the words a
           rollback writes back (`for r in {{ before.restore }}; do ...`)
"""
from __future__ import annotations

import re

from ._hosttext import cpulist, fail, lines_of
from .base import ParseError, Parser, Record

_NODE = re.compile(r"^(?P<dev>\S+) numa_node ?(?P<numa>-?\d+)? local_cpulist ?(?P<cpus>\S+)?$")
_IRQ = re.compile(r"^(?P<dev>\S+) irq (?P<irq>\d+) ?(?P<cpus>\S+)?$")


def _device(devices: dict[str, Record], dev: str) -> Record:
    return devices.setdefault(dev, {"numa_node": None, "local_cpulist": None, "local_cpus": [],
                                    "irqs": {}, "irq_cpus": {}})


def parse_irq_affinity(text: str) -> Record:
    devices: dict[str, Record] = {}
    restore: list[str] = []
    for line in lines_of(text):
        s = line.strip()
        if not s:
            continue
        if m := _NODE.match(s):
            d = _device(devices, m["dev"])
            d["numa_node"] = int(m["numa"]) if m["numa"] is not None else None
            d["local_cpulist"] = m["cpus"]
            d["local_cpus"] = cpulist(m["cpus"]) if m["cpus"] else []
        elif m := _IRQ.match(s):
            d = _device(devices, m["dev"])
            d["irqs"][m["irq"]] = m["cpus"]
            d["irq_cpus"][m["irq"]] = cpulist(m["cpus"]) if m["cpus"] else []
            if m["cpus"]:
                restore.append(f"{m['irq']}={m['cpus']}")
        elif not devices:
            fail("lines like 'mlx5_0 numa_node 0 local_cpulist 0-31' / 'mlx5_0 irq 120 0-31'", text)
        else:
            raise ParseError(f"irq-affinity: unexpected line {s[:80]!r}")
    if not devices:
        fail("lines like 'mlx5_0 numa_node 0 local_cpulist 0-31' / 'mlx5_0 irq 120 0-31'", text)
    return {"devices": devices, "restore": restore}


PARSERS = [Parser(name="irq-affinity", reads="the irq-affinity step's per-device IRQ listing",
                  func=parse_irq_affinity,
           description="per device IRQs with their CPU affinity lists")]
