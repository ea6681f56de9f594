"""`ibstat`: every designed IB port (compute rails and storage) Active / LinkUp
at the designed rate, with a LID (a port the SM never configured has LID 0) and
the same SM LID on every port of the host (the fleet-wide SM LID and firmware
are `consistent:` checks); each card of the family the design names
(`hca:`), running the design's firmware for that family (`hca_firmware`).

With the `ibstat-by-pci` parser the NICs are found by PCI address, so a dead
card is reported at its own slot and its renumbered neighbours are judged as
themselves."""

from __future__ import annotations

from typing import Any

from ..design import Comparator
from ._util import designed_nics, missing_card

# ibstat "CA type" (the PCI device ID in decimal) of the ConnectX families
CA_FAMILY = {
    "MT4119": "ConnectX-5",
    "MT4123": "ConnectX-6",
    "MT4125": "ConnectX-6 Dx",
    "MT4127": "ConnectX-6 Lx",
    "MT4129": "ConnectX-7",
    "MT4131": "ConnectX-8",
}


def _port_problems(port: dict, rate: float) -> list[str]:
    bad = []
    state, phys, layer = port.get("state"), port.get("physical_state"), port.get("link_layer")
    if layer not in (None, "InfiniBand"):
        bad.append(
            f"link layer {layer}, expected InfiniBand (the port is in Ethernet mode: see link-type-ib; "
            "cabled to an IB switch it never gets link)"
        )
    elif phys == "LinkUp" and state == "Initializing":
        bad.append(
            "state Initializing with link up: no subnet manager has configured the port "
            "(see opensm-active / sm-master-standby)"
        )
    elif state != "Active":
        bad.append(f"state {state}, expected Active")
    if phys != "LinkUp":
        bad.append(f"physical state {phys}, expected LinkUp (cable, transceiver or switch port)")
    if phys == "LinkUp" and (port.get("rate") is None or float(port["rate"]) != rate):
        bad.append(f"rate {port.get('rate')}, expected {rate:g}")
    if layer in (None, "InfiniBand") and phys == "LinkUp" and state == "Active" and not port.get("base_lid"):
        bad.append("LID 0 (the SM never configured this port)")
    if layer in (None, "InfiniBand") and phys == "LinkUp" and state == "Active" and not port.get("sm_lid"):
        bad.append("SM LID 0 (no subnet manager seen)")
    return bad


def ib_ports(record: Any, v: dict) -> list[str]:
    rate = float(v["ib_rate_gbps"])
    firmware = v.get("hca_firmware") or {}
    cas = record["by_name"]
    out = []
    sm_lids: dict[str, Any] = {}
    for nic, _role, dev, label in designed_nics(record, v):
        if dev is None:
            out.append(missing_card(label, nic))
            continue
        ca = cas.get(dev) or {}
        port = ca.get("ports", {}).get("1")
        if port is None:
            out.append(f"{label} port 1: not in the ibstat output (device missing?)")
            continue
        bad = _port_problems(port, float(nic.get("rate_gbps", rate)))
        if port.get("sm_lid"):
            sm_lids[dev] = port["sm_lid"]
        family = CA_FAMILY.get(str(ca.get("type")))
        if nic.get("hca") and family and family != str(nic["hca"]):
            bad.append(f"a {family} ({ca.get('type')}) where the design has a {nic['hca']}")
        want = firmware.get(str(nic.get("hca"))) if nic.get("hca") else None
        if want and ca.get("firmware_version") and str(ca["firmware_version"]) != str(want):
            bad.append(f"firmware {ca['firmware_version']}, expected {want} (hca_firmware for {nic['hca']})")
        if bad:
            out.append(f"{label} port 1: " + ", ".join(bad))
    if len(set(sm_lids.values())) > 1:
        seen = ", ".join(f"{d} {lid}" for d, lid in sm_lids.items())
        out.append(f"ports see different SM LIDs ({seen}): expected one subnet manager")
    return out


COMPARATORS = [
    Comparator(
        "ib-ports",
        "host",
        ib_ports,
        "every designed port (compute and storage) Active/LinkUp at ib_rate_gbps with a LID, "
        "one SM LID, the designed HCA family and firmware",
    )
]
