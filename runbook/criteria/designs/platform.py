"""Platform settings against the design: ACS on the PCIe switch ports
(`lspci -vvv -d SWITCH`, every ACSCtl bit off so peer-to-peer traffic crosses
the switch instead of detouring through the root complex), and the firmware
and PSID of every ConnectX adapter (`mlxfwmanager --query`)."""

from __future__ import annotations

import re
from typing import Any

from ..design import Comparator
from ._util import examples, is_pci_address, nic_label, pci_address


def pcie_acs(record: Any, v: dict) -> list[str]:
    ports = [d for d in record.get("devices", []) if d.get("acsctl") is not None]
    if not ports:
        raise ValueError(
            "no ACSCtl read on any switch port (lspci not run as root, or not the designed switch)"
        )
    on = [d for d in ports if d.get("acs_enabled")]
    if not on:
        return []
    flags = sorted({f for d in on for f in d["acs_enabled"]})
    return [
        f"ACS on at {len(on)} of {len(ports)} switch ports ({examples([d['slot'] for d in on])}): "
        f"{' '.join(f + '+' for f in flags)} (expected every ACSCtl bit off)"
    ]


def _family(device_type: str | None) -> str | None:
    """mlxfwmanager's Device Type (ConnectX7) as the inventory names the family (ConnectX-7)."""
    m = re.fullmatch(r"ConnectX-?(\d+\w*)", (device_type or "").strip(), re.I)
    return f"ConnectX-{m.group(1)}" if m else None


def _card_slot(pci: str) -> str:
    """A function's card: function 0 of the same bus and device (0000:ac:00.1 -> 0000:ac:00.0)."""
    return pci_address(pci)[:-1] + "0"


def _missing_cards(devices: list, v: dict) -> list[str]:
    """Every designed card (compute_nics / storage_nics, by PCI address) must be
    listed. mlxfwmanager names an adapter by its BDF when MST is not started and by
    its /dev/mst device when it is; only the former ties a line to a slot, so with
    /dev/mst names the count is compared and mellanox-functions names the slot."""
    cards: dict[str, str] = {}
    for role in ("compute", "storage"):
        for nic in v.get(f"{role}_nics", []) or []:
            if nic.get("pci"):
                cards.setdefault(_card_slot(nic["pci"]), nic_label(nic, role))
    if not cards:
        return []
    names = [str(d.get("pci_device_name") or "").strip() for d in devices]
    if names and all(is_pci_address(n) for n in names):
        listed = {_card_slot(n) for n in names}
        return [
            f"{label}: not listed by mlxfwmanager (card dead or unseated, or the slot disabled in the BIOS: "
            f"`lspci -s {slot[5:]}`)"
            for slot, label in cards.items()
            if slot not in listed
        ]
    if len(devices) < len(cards):
        return [
            f"mlxfwmanager lists {len(devices)} adapters, the design has {len(cards)} cards "
            f"({', '.join(cards)}): a card is missing (listed by /dev/mst name, not by slot: "
            "mellanox-functions names the slot)"
        ]
    return []


def hca_firmware(record: Any, v: dict) -> list[str]:
    """Each adapter against its family's design: the family is the one whose planned
    PSIDs (hca_psids) hold the adapter's PSID, else the one its Device Type names;
    its firmware must be that family's hca_firmware (the same design value the
    ib-ports step compares ibstat's "Firmware version" with)."""
    devices = record.get("devices") or []
    if not devices:
        raise ValueError("mlxfwmanager lists no adapter")
    firmware = {str(k): str(x) for k, x in (v.get("hca_firmware") or {}).items()}
    psids = {str(k): [str(p) for p in (x or [])] for k, x in (v.get("hca_psids") or {}).items()}
    if not firmware or not psids:
        raise ValueError("the design has no hca_firmware / hca_psids per adapter family")
    planned = sorted({p for x in psids.values() for p in x})
    out = _missing_cards(devices, v)
    for d in devices:
        card = f"adapter #{d.get('index')} ({d.get('pci_device_name') or '?'}, {d.get('part_number') or '?'})"
        family = next((f for f, x in psids.items() if d.get("psid") in x), None)
        if family is None:
            out.append(
                f"{card}: PSID {d.get('psid')} is not a designed part (expected {' or '.join(planned)})"
            )
            family = _family(d.get("device_type"))
        want = firmware.get(family or "")
        if want is None:
            out.append(
                f"{card}: no designed firmware for {family or d.get('device_type') or 'an unknown type'} "
                f"(hca_firmware has {', '.join(firmware)})"
            )
        elif d.get("fw_current") != want:
            out.append(f"{card}: FW expected {want} ({family}), found {d.get('fw_current')}")
    return out


COMPARATORS = [
    Comparator("pcie-acs", "host", pcie_acs, "every ACSCtl bit off on the PCIe switch ports"),
    Comparator(
        "hca-firmware",
        "host",
        hca_firmware,
        "every ConnectX adapter on its family's hca_firmware with a PSID of its hca_psids",
    ),
]
