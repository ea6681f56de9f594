"""NIC mode: every VPI port in InfiniBand mode, as mlxconfig has it in force
(LINK_TYPE_P1, and LINK_TYPE_P2 for the functions that are port 2 of a
dual-port card) and as the kernel reports the port's link layer."""

from __future__ import annotations

import re
from typing import Any

from ..design import Comparator

_IB = 1


def _number(value: str) -> int | None:
    m = re.search(r"\((\d+)\)\s*$", value) or re.fullmatch(r"\s*(\d+)\s*", value)
    return int(m.group(1)) if m else None


def link_type_ib(record: Any, v: dict) -> list[str]:
    in_force = record["by_device"]
    next_boot: dict[str, dict[str, str]] = {}
    for block in record["devices"]:
        if block.get("device") and "next_boot" in block:
            next_boot.setdefault(block["device"], {}).update(block["next_boot"])
    wanted = [(d, "LINK_TYPE_P1") for d in v["ib_mode_devices"]]
    wanted += [(d, "LINK_TYPE_P2") for d in v.get("ib_mode_port2_devices", [])]
    out = []
    for dev, param in wanted:
        value = in_force.get(dev, {}).get(param)
        if value is None:
            errors = "; ".join(record.get("errors") or [])
            out.append(f"{dev} {param}: no answer from mlxconfig" + (f" ({errors})" if errors else ""))
            continue
        if _number(value) != _IB:
            pending = next_boot.get(dev, {}).get(param)
            owed = (
                " (IB(1) is set for the next boot: a reboot is owed; if the node has rebooted since,"
                " the warm reboot did not reset the card's firmware: the apply resets it with"
                " mlxfwreset, or a power cycle is owed)"
                if pending is not None and _number(pending) == _IB
                else ""
            )
            out.append(f"{dev} {param}: expected IB(1), found {value}{owed}")
    return out


def ib_link_layer(record: Any, v: dict) -> list[str]:
    found = record["by_device"]
    out = []
    if record.get("pci_map") is not None:  # sysfs-link-layer-by-pci: each designed NIC by its slot
        from ._util import designed_nics, missing_card

        for nic, _, dev, label in designed_nics(record, v):
            layer = (found.get(dev) or {}).get("1") if dev else None
            if dev is None:
                out.append(missing_card(label, nic))
            elif layer is None:
                out.append(f"{label} port 1: no link_layer in the output (device missing?)")
            elif layer != "InfiniBand":
                out.append(f"{label} port 1 link_layer: expected InfiniBand, found {layer}")
        return out
    for dev in v["ib_mode_devices"]:
        layer = (found.get(dev) or {}).get("1")
        if layer is None:
            out.append(f"{dev} port 1: no link_layer in the output (device missing?)")
        elif layer != "InfiniBand":
            out.append(f"{dev} port 1 link_layer: expected InfiniBand, found {layer}")
    return out


COMPARATORS = [
    Comparator("link-type-ib", "host", link_type_ib, "LINK_TYPE_P1 (and P2 where designed) = IB(1) in force"),
    Comparator(
        "ib-link-layer", "host", ib_link_layer, "port 1 of every ib_mode_devices function is InfiniBand"
    ),
]
