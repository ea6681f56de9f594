"""The irq-affinity step's listing of every RDMA device's interrupts.

The step prints, per device, where the kernel says the device sits and where
each of its MSI-X interrupts is allowed to run:

    mlx5_0 numa_node 0 local_cpulist 0-31,64-95
    mlx5_0 irq 120 0-31,64-95
    mlx5_0 irq 121 5

and, before or after the devices, irqbalance's state and configuration:

    irqbalance active active enabled enabled
    irqbalance args IRQBALANCE_ARGS="--policyscript=/usr/local/sbin/irqbalance-ban-mlx5.sh"
    boot unit nic-irq-affinity enabled

(`systemctl is-active` / `is-enabled` words; the IRQBALANCE_ARGS line of
/etc/sysconfig/irqbalance, empty when none is set; the boot-time unit that
pins the interrupts again after a boot, its is-enabled word, empty when the
unit is not installed.)
(`numa_node` and `local_cpulist` come from /sys/class/infiniband/DEV/device,
the IRQ numbers from its msi_irqs/ directory, the lists from
/proc/irq/N/smp_affinity_list.) A device whose sysfs files were missing prints
empty values; it is kept with nulls so the criterion can name it.

Record:
  devices: {dev: {numa_node, local_cpulist, local_cpus: [...],
                  irqs: {"120": "0-31,64-95"}, irq_cpus: {"120": [...]}}}
  restore: ["120=0-31,64-95", ...]   every IRQ's list as found, the words a
           rollback writes back (`for r in {{ before.restore }}; do ...`)
  irqbalance: {active: "active"|"inactive"|..., enabled: "enabled"|"disabled"|...,
               args: str (the IRQBALANCE_ARGS value, unquoted; "" when unset)}
              or null when the listing has no irqbalance lines
  boot_unit: {name, enabled: "enabled"|"disabled"|...|""} or null
"""

from __future__ import annotations

import re

from ._hosttext import cpulist, fail, lines_of
from .base import ParseError, Parser, Record

_NODE = re.compile(r"^(?P<dev>\S+) numa_node ?(?P<numa>-?\d+)? local_cpulist ?(?P<cpus>\S+)?$")
_IRQ = re.compile(r"^(?P<dev>\S+) irq (?P<irq>\d+) ?(?P<cpus>\S+)?$")
_BALANCE_STATE = re.compile(r"^irqbalance active (?P<active>\S*) ?enabled ?(?P<enabled>\S*)$")
_BOOT_UNIT = re.compile(r"^boot unit (?P<name>\S+) ?(?P<state>\S*)$")
_BALANCE_ARGS = re.compile(r"^irqbalance args ?(?:IRQBALANCE_ARGS=)?(?P<args>.*)$")


def _device(devices: dict[str, Record], dev: str) -> Record:
    return devices.setdefault(
        dev, {"numa_node": None, "local_cpulist": None, "local_cpus": [], "irqs": {}, "irq_cpus": {}}
    )


def parse_irq_affinity(text: str) -> Record:
    devices: dict[str, Record] = {}
    restore: list[str] = []
    balance: Record | None = None
    boot_unit: Record | None = None
    for line in lines_of(text):
        s = line.strip()
        if not s:
            continue
        if m := _BALANCE_STATE.match(s):
            balance = {
                **(balance or {"args": ""}),
                "active": m["active"] or None,
                "enabled": m["enabled"] or None,
            }
        elif m := _BALANCE_ARGS.match(s):
            balance = {
                **(balance or {"active": None, "enabled": None}),
                "args": m["args"].strip().strip("\"'"),
            }
        elif m := _BOOT_UNIT.match(s):
            boot_unit = {"name": m["name"], "enabled": m["state"]}
        elif m := _NODE.match(s):
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
        elif not devices and balance is None and boot_unit is None:
            fail("lines like 'mlx5_0 numa_node 0 local_cpulist 0-31' / 'mlx5_0 irq 120 0-31'", text)
        else:
            raise ParseError(f"irq-affinity: unexpected line {s[:80]!r}")
    if not devices:
        fail("lines like 'mlx5_0 numa_node 0 local_cpulist 0-31' / 'mlx5_0 irq 120 0-31'", text)
    return {"devices": devices, "restore": restore, "irqbalance": balance, "boot_unit": boot_unit}


PARSERS = [
    Parser(
        name="irq-affinity",
        reads="the irq-affinity step's per-device IRQ listing",
        func=parse_irq_affinity,
        description="per device IRQs with their CPU affinity lists",
    )
]
