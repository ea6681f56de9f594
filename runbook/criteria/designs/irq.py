"""IRQ affinity against the MEASURED topology: every interrupt of every RDMA
device may only run on the CPUs local to the device's own NUMA node (the
kernel's local_cpulist). The design is not consulted: when the NIC sits in the
other socket, its interrupts must follow it (nic-numa-affinity reports the
difference from the design).

irqbalance (installed and enabled on RHEL) moves every interrupt it is not
told to leave alone at its next pass, i.e. after the pinning was judged. So its
state is judged too, by the site's irqbalance_policy:
  ban   irqbalance may run, but with the NIC interrupts banned: IRQBALANCE_ARGS
        carries the design's --policyscript (irqbalance_policyscript, which
        answers ban=true for mlx5 devices) or a --banirq for every NIC IRQ;
  stop  irqbalance stopped and disabled (NVIDIA's tuning guides, before
        set_irq_affinity*.sh).
A listing without irqbalance lines cannot show either: unknown, not pass."""

from __future__ import annotations

import re
from typing import Any

from ..design import Comparator
from ._util import by_slot, examples, is_pci_address, pci_address, slot_label


def _irqbalance(record: Any, v: dict) -> list[str]:
    policy = str(v.get("irqbalance_policy") or "ban")
    state = record.get("irqbalance")
    if state is None:
        raise ValueError("the listing has no irqbalance state (lines 'irqbalance active ... enabled ...')")
    active, enabled, args = state.get("active"), state.get("enabled"), state.get("args") or ""
    if policy == "stop":
        if active == "active" or enabled == "enabled":
            return [
                f"irqbalance is {active}/{enabled}, the design stops it (irqbalance_policy: stop): "
                "it would move the pinned NIC interrupts at its next pass"
            ]
        return []
    if policy != "ban":
        raise ValueError(f"irqbalance_policy {policy!r} is not 'ban' or 'stop'")
    if active != "active":
        return []  # not running: it moves nothing (a reboot starts it again if enabled: the ban is still judged)
    script = str(v.get("irqbalance_policyscript") or "")
    banned = {m for m in re.findall(r"--banirq[= ](\d+)", args)}
    nic_irqs = {irq for d in record["devices"].values() for irq in d["irqs"]}
    if script and f"--policyscript={script}" in args or (nic_irqs and nic_irqs <= banned):
        return []
    want = f"--policyscript={script}" if script else "--banirq for every NIC IRQ"
    return [
        f"irqbalance is active and does not leave the NIC interrupts alone (IRQBALANCE_ARGS="
        f"{args or 'unset'}; the design bans them: {want}): it moves them at its next pass"
    ]


def _boot_unit(record: Any, v: dict) -> list[str]:
    """The pinning must survive a boot (link-type-ib itself owes one): the design's
    boot-time unit (irq_affinity_unit) installed and enabled."""
    name = v.get("irq_affinity_unit")
    if not name:
        return []
    unit = record.get("boot_unit")
    if unit is None or unit["name"] != name:
        raise ValueError(f"the listing does not show the boot-time unit {name} (line 'boot unit {name} ...')")
    if unit["enabled"] != "enabled":
        state = unit["enabled"] or "not installed"
        return [f"boot-time unit {name}: {state}, expected enabled (the pinning is lost at the next boot)"]
    return []


def irq_affinity(record: Any, v: dict) -> list[str]:
    """Every designed NIC's interrupts. With ib_mode_pci the listing is keyed by PCI
    address (the loop finds each card's sysfs by its slot), so a dead card is named
    at its slot and its renumbered neighbour is judged as itself; without it, by
    the mlx5_N names of ib_mode_devices."""
    devices = by_slot(record["devices"])
    out = _irqbalance(record, v) + _boot_unit(record, v)
    if v.get("ib_mode_pci"):
        wanted = [(pci_address(p), slot_label(p, v)) for p in v["ib_mode_pci"]]
    else:
        wanted = [(d, d) for d in v["ib_mode_devices"]]
    for dev, label in wanted:
        d = devices.get(dev)
        if d is None or not d["local_cpus"]:
            if is_pci_address(dev):
                out.append(
                    f"{label}: no numa_node/local_cpulist in sysfs at this PCI address (card dead or "
                    f"unseated, or its driver not bound: `lspci -s {dev[5:]}`)"
                )
            else:
                out.append(f"{label}: no numa_node/local_cpulist in sysfs (device missing?)")
            continue
        if not d["irqs"]:
            out.append(f"{label}: no MSI-X interrupts listed (driver not bound?)")
            continue
        local = set(d["local_cpus"])
        wrong = [
            f"{irq}→{d['irqs'][irq] or '?'}"
            for irq in d["irqs"]
            if not d["irq_cpus"][irq] or not set(d["irq_cpus"][irq]) <= local
        ]
        if wrong:
            out.append(
                f"{label} (NUMA node {d['numa_node']}, CPUs {d['local_cpulist']}): {len(wrong)} of "
                f"{len(d['irqs'])} IRQs may run outside it: {examples(wrong, 3)}"
            )
    return out


COMPARATORS = [
    Comparator(
        "irq-affinity", "host", irq_affinity, "every NIC interrupt pinned to CPUs of the NIC's own NUMA node"
    )
]
