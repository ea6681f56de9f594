"""Small helpers shared by the design comparators (not a comparator module)."""

from __future__ import annotations

import re
from typing import Any


def pkey_number(value: Any) -> int:
    """'0x100' / '0x8100' / 256 -> the 15-bit partition number."""
    return (int(value, 0) if isinstance(value, str) else int(value)) & 0x7FFF


def pkey_text(value: Any) -> str:
    return f"0x{pkey_number(value):04x}"


def examples(items: list[str], limit: int = 4) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def by_key(mapping: dict, key: Any) -> Any:
    """mapping[key] whether YAML gave the key as an int or a string (rail_leaves: {1: leaf01})."""
    for k in (key, str(key)):
        if k in mapping:
            return mapping[k]
    if isinstance(key, str) and key.isdigit() and int(key) in mapping:
        return mapping[int(key)]
    raise KeyError(key)


def pci_address(value: Any) -> str:
    """'18:00.0' / '0000:18:00.0' -> '0000:18:00.0' (how the design and pci_map key NICs)."""
    v = str(value).strip().lower()
    return v if v.count(":") == 2 else "0000:" + v


def nic_label(nic: dict, role: str) -> str:
    """How a reason names a designed NIC: by its slot first ("rail 2 NIC
    0000:20:00.0"), the device name it is designed to get in brackets."""
    what = f"rail {nic['rail']} NIC" if role == "compute" and "rail" in nic else f"{role} NIC"
    if not nic.get("pci"):
        return str(nic["dev"])
    return f"{what} {pci_address(nic['pci'])} ({nic['dev']})"


def designed_nics(record: Any, v: dict, roles: tuple[str, ...] = ("compute", "storage")) -> list[tuple]:
    """(nic, role, device on this host or None, label) for every designed NIC.
    With a `pci_map` in the record (the *-by-pci parsers), a NIC designed with a
    `pci:` is found by its PCI address, so a dead card is named by its own slot
    and its renumbered neighbours are still judged as themselves; None means no
    RDMA device at that address. Without a map, the designed `dev` name is used."""
    pci_map = record.get("pci_map") if isinstance(record, dict) else None
    out = []
    for role in roles:
        for nic in v.get(f"{role}_nics", []) or []:
            if pci_map is not None and nic.get("pci"):
                dev = pci_map.get(pci_address(nic["pci"]))
            else:
                dev = nic["dev"]
            out.append((nic, role, dev, nic_label(nic, role)))
    return out


def missing_card(label: str, nic: dict) -> str:
    slot = pci_address(nic["pci"])[5:] if nic.get("pci") else "?"
    return (
        f"{label}: no RDMA device at this PCI address (card dead, unseated or its driver not bound: "
        f"`lspci -s {slot}`, `dmesg | grep {slot}`)"
    )


_BDF = re.compile(r"^(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")


def is_pci_address(value: Any) -> bool:
    """'0000:18:00.0' / '18:00.0' (a BDF), not 'mlx5_0' or '/dev/mst/mt4129_pciconf0'."""
    return bool(_BDF.match(str(value).strip()))


def slot_label(pci: Any, v: dict) -> str:
    """The label of the designed NIC at a PCI address (compute_nics / storage_nics),
    or the bare address when the design does not list it."""
    want = pci_address(pci)
    for role in ("compute", "storage"):
        for nic in v.get(f"{role}_nics", []) or []:
            if nic.get("pci") and pci_address(nic["pci"]) == want:
                return nic_label(nic, role)
    return want


def by_slot(found: dict) -> dict:
    """A record keyed by the device as the tool echoed it, re-keyed by full PCI
    address where the key is one ('18:00.0' -> '0000:18:00.0'); other keys kept."""
    return {pci_address(k) if is_pci_address(k) else k: x for k, x in found.items()}
