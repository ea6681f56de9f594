"""PCIe links from `lspci -vv`: every GPU / Mellanox function's LnkSta speed
and width equal to the design (pcie_gpu_speed/width, pcie_nic_speed/width).

A link that trained down (x8, 8GT/s) fails even though everything "works".
lspci also marks a link "(downgraded)" when it runs below the *device's*
capability: a Gen5 ConnectX-7 in the designed Gen4 slot is downgraded and yet
exactly as designed, so the design values decide, and the marker is quoted in
the reason when a link is below them."""
from __future__ import annotations

from typing import Any

from ..design import Comparator


def _links(record: dict, speed: str, width: str, count: int, what: str) -> list[str]:
    devices = record["devices"]
    out = []
    if len(devices) != count:
        out.append(f"{what}: expected {count} devices, found {len(devices)}")
    for d in devices:
        sta = d.get("lnksta")
        if sta is None:
            if d.get("capabilities_access_denied"):
                raise ValueError(f"{d['slot']}: capabilities not readable (lspci -vv must run as root)")
            out.append(f"{d['slot']}: no LnkSta line (not a PCIe endpoint?)")
            continue
        if sta["speed"] != speed or sta["width"] != width:
            mark = " (downgraded)" if sta.get("downgraded") else ""
            cap = d.get("lnkcap") or {}
            capable = f"; LnkCap {cap.get('speed')} {cap.get('width')}" if cap else ""
            out.append(f"{d['slot']} {d.get('model') or d['class']}: LnkSta expected {speed} {width}, "
                       f"found {sta['speed']} {sta['width']}{mark}{capable}")
    return out


def pcie_link_gpu(record: Any, v: dict) -> list[str]:
    return _links(record, str(v["pcie_gpu_speed"]), str(v["pcie_gpu_width"]), int(v["gpus_per_node"]), "GPUs")


def pcie_link_nic(record: Any, v: dict) -> list[str]:
    return _links(record, str(v["pcie_nic_speed"]), str(v["pcie_nic_width"]),
                  int(v["mellanox_functions"]), "Mellanox functions")


COMPARATORS = [
    Comparator("pcie-link-gpu", "host", pcie_link_gpu, "every GPU at pcie_gpu_speed / pcie_gpu_width"),
    Comparator("pcie-link-nic", "host", pcie_link_nic, "every Mellanox function at pcie_nic_speed / pcie_nic_width"),
]
