"""`lspci -nn -d 15b3:`: every designed NIC's PCI address present, as the
adapter family the design names (`hca:`). A card gone from the bus is named by
its own slot here, before the renumbered mlx5_N names mislead the later steps."""

from __future__ import annotations

from typing import Any

from ..design import Comparator
from ._util import nic_label, pci_address


def nic_slots(record: Any, v: dict) -> list[str]:
    found = {pci_address(d["slot"]): d for d in record["devices"] if d.get("slot")}
    out = []
    for role in ("compute", "storage"):
        for nic in v.get(f"{role}_nics", []) or []:
            if not nic.get("pci"):
                continue
            label = nic_label(nic, role)
            dev = found.get(pci_address(nic["pci"]))
            if dev is None:
                out.append(
                    f"{label}: not on the PCI bus (card dead or unseated, or the slot disabled in the BIOS)"
                )
            elif nic.get("hca") and dev.get("model") and dev["model"] != str(nic["hca"]):
                out.append(f"{label}: a {dev['model']} in this slot, the design has a {nic['hca']}")
    return out


COMPARATORS = [
    Comparator(
        "nic-slots",
        "host",
        nic_slots,
        "every compute_nics/storage_nics PCI address present with the designed adapter family",
    )
]
