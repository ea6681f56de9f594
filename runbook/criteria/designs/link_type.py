"""NIC mode: every VPI port in InfiniBand mode, as mlxconfig has it in force
(LINK_TYPE_P1, and LINK_TYPE_P2 for the functions that are port 2 of a
dual-port card) and as the kernel reports the port's link layer."""

from __future__ import annotations

import re
from typing import Any

from ..design import Comparator
from ._util import by_slot, is_pci_address, pci_address, slot_label

_IB = 1


def _number(value: str) -> int | None:
    m = re.search(r"\((\d+)\)\s*$", value) or re.fullmatch(r"\s*(\d+)\s*", value)
    return int(m.group(1)) if m else None


def _wanted(v: dict) -> list[tuple[str, str, str]]:
    """(device as the loop names it, parameter, label) of every port to judge.
    With ib_mode_pci the loop queries each designed card by its PCI address, so a
    dead card is named at its own slot and its renumbered neighbours are judged as
    themselves; without it, by the mlx5_N names of ib_mode_devices."""
    if v.get("ib_mode_pci"):
        pcis = [(p, "LINK_TYPE_P1") for p in v["ib_mode_pci"]]
        pcis += [(p, "LINK_TYPE_P2") for p in v.get("ib_mode_port2_pci") or []]
        for p, _ in pcis:
            if not str(p).strip().lower().startswith("0000:") or not is_pci_address(p):
                raise ValueError(f"ib_mode_pci entry {p!r} is not a full PCI address (0000:bb:dd.f)")
        return [(pci_address(p), param, slot_label(p, v)) for p, param in pcis]
    wanted = [(d, "LINK_TYPE_P1", d) for d in v["ib_mode_devices"]]
    return wanted + [(d, "LINK_TYPE_P2", d) for d in v.get("ib_mode_port2_devices", [])]


def link_type_ib(record: Any, v: dict) -> list[str]:
    in_force = by_slot(record["by_device"])
    next_boot: dict[str, dict[str, str]] = {}
    for block in record["devices"]:
        if block.get("device") and "next_boot" in block:
            next_boot.setdefault(block["device"], {}).update(block["next_boot"])
    next_boot = by_slot(next_boot)
    out = []
    for dev, param, label in _wanted(v):
        value = in_force.get(dev, {}).get(param)
        if value is None:
            errors = "; ".join(
                e for e in record.get("errors") or [] if dev[5:] in e or not is_pci_address(dev)
            )
            gone = (
                f" (card dead or unseated, or MST cannot reach it: `lspci -s {dev[5:]}`, mellanox-functions)"
                if is_pci_address(dev)
                else ""
            )
            out.append(
                f"{label} {param}: no answer from mlxconfig" + (f" ({errors})" if errors else "") + gone
            )
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
            out.append(f"{label} {param}: expected IB(1), found {value}{owed}")
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
