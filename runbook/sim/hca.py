"""The ConnectX adapter families the simulator can fit, chosen per NIC by the
inventory (`hca:` of compute_nics / storage_nics). Identity strings as the real
tools print them: ibstat "CA type" and ibv_devinfo vendor_part_id
(fixtures/real-outputs/ibstat, ibv_devinfo), the lspci name and device ID
(lspci-vv, lspci-grep-mellanox), the mst device name (mst-status-v), the PCIe
generation of the card (a ConnectX-7 is PCIe Gen5: LnkCap 32GT/s, so in the
seed's Gen4 slots lspci prints "Speed 16GT/s (downgraded)")."""

from __future__ import annotations

import functools
from dataclasses import dataclass


@dataclass(frozen=True)
class HcaModel:
    family: str  # ConnectX-7
    ca_type: str  # MT4129 (ibstat CA type, hca_type in sysfs)
    vendor_part: str  # 4129 (ibv_devinfo vendor_part_id)
    pci_device: str  # 1021 (lspci -n, ibnetdiscover devid)
    pci_name: str  # MT2910 Family [ConnectX-7]
    mst_type: str  # ConnectX7 (mst status -v DEVICE_TYPE)
    mst_chip: str  # mt4129 (/dev/mst/mt4129_pciconf0)
    firmware: str  # the default firmware when the inventory states none
    pcie_cap: str  # LnkCap speed of the card
    parts: dict  # ports -> (part number, PSID, mlxconfig/VPD description)


CONNECTX6 = HcaModel(
    "ConnectX-6",
    "MT4123",
    "4123",
    "101b",
    "MT28908 Family [ConnectX-6]",
    "ConnectX6",
    "mt4123",
    "20.39.1002",
    "16GT/s",
    {
        1: (
            "MCX653105A-HDAT",
            "MT_0000000223",
            "ConnectX-6 VPI adapter card, HDR IB (200Gb/s) and 200GbE, single-port QSFP56, PCIe4.0 x16",
        ),
        2: (
            "MCX653106A-HDAT",
            "MT_0000000225",
            "ConnectX-6 VPI adapter card, HDR IB (200Gb/s) and 200GbE, dual-port QSFP56, PCIe4.0 x16",
        ),
    },
)
CONNECTX7 = HcaModel(
    "ConnectX-7",
    "MT4129",
    "4129",
    "1021",
    "MT2910 Family [ConnectX-7]",
    "ConnectX7",
    "mt4129",
    "28.39.1002",
    "32GT/s",
    {
        1: (
            "MCX75310AAS-NEAT",
            "MT_0000000838",
            "NVIDIA ConnectX-7 HHHL Adapter Card, 400GbE / NDR IB (default mode), Single-port OSFP, "
            "PCIe 5.0 x16",
        ),
        2: (
            "MCX755106AS-HEAT",
            "MT_0000000834",
            "NVIDIA ConnectX-7 Adapter Card, 200GbE / NDR200, Dual-port QSFP112, PCIe 5.0x16",
        ),
    },
)
SPEED_ORDER = ["2.5GT/s", "5GT/s", "8GT/s", "16GT/s", "32GT/s", "64GT/s"]
MODELS = {m.family: m for m in (CONNECTX6, CONNECTX7)}


@functools.lru_cache(maxsize=256)
def of_part(part: str) -> HcaModel:
    """The model of a card by its part number (MCX75310AAS-NEAT -> ConnectX-7).
    A question of the constant MODELS alone, asked for every NIC of every
    PCI listing (lspci, nvbandwidth, sysfs): answered once per part number."""
    for m in MODELS.values():
        if any(p == part for p, _, _ in m.parts.values()):
            return m
    return CONNECTX6


def model(family: str | None) -> HcaModel:
    """The model of an inventory `hca:` value (ConnectX-6 when absent)."""
    key = str(family or "ConnectX-6").replace(" ", "-")
    if key not in MODELS:
        raise ValueError(f"unknown hca {family!r} (the simulator fits {', '.join(MODELS)})")
    return MODELS[key]
