"""Platform settings against the design: ACS on the PCIe switch ports
(`lspci -vvv -d SWITCH`, every ACSCtl bit off so peer-to-peer traffic crosses
the switch instead of detouring through the root complex), and the firmware
and PSID of every ConnectX adapter (`mlxfwmanager --query`)."""
from __future__ import annotations

from typing import Any

from ..design import Comparator
from ._util import examples


def pcie_acs(record: Any, v: dict) -> list[str]:
    ports = [d for d in record.get("devices", []) if d.get("acsctl") is not None]
    if not ports:
        raise ValueError("no ACSCtl read on any switch port (lspci not run as root, or not the designed switch)")
    on = [d for d in ports if d.get("acs_enabled")]
    if not on:
        return []
    flags = sorted({f for d in on for f in d["acs_enabled"]})
    return [f"ACS on at {len(on)} of {len(ports)} switch ports ({examples([d['slot'] for d in on])}): "
            f"{' '.join(f + '+' for f in flags)} (expected every ACSCtl bit off)"]


def hca_firmware(record: Any, v: dict) -> list[str]:
    devices = record.get("devices") or []
    if not devices:
        raise ValueError("mlxfwmanager lists no adapter")
    want, psids = str(v["hca_firmware_version"]), [str(p) for p in v["hca_psids"]]
    out = []
    for d in devices:
        card = f"adapter #{d.get('index')} ({d.get('pci_device_name') or '?'}, {d.get('part_number') or '?'})"
        if d.get("fw_current") != want:
            out.append(f"{card}: FW expected {want}, found {d.get('fw_current')}")
        if d.get("psid") not in psids:
            out.append(f"{card}: PSID {d.get('psid')} is not a designed part (expected {' or '.join(psids)})")
    return out


COMPARATORS = [Comparator("pcie-acs", "host", pcie_acs, "every ACSCtl bit off on the PCIe switch ports"),
               Comparator("hca-firmware", "host", hca_firmware,
                          "every ConnectX adapter on hca_firmware_version with a PSID of hca_psids")]
