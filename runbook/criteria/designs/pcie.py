"""PCIe links from `lspci -vv`: every GPU / Mellanox function's LnkSta speed
and width equal to the design (pcie_gpu_speed/width, pcie_nic_speed/width).

A link that trained down (x8, 8GT/s) fails even though everything "works".
lspci also marks a link "(downgraded)" when it runs below the *device's*
capability: a Gen5 ConnectX-7 in the designed Gen4 slot is downgraded and yet
exactly as designed, so the design values decide, and the marker is quoted in
the reason when a link is below them.

GPUs save power at idle: an idle L40S / AD102 (P8) retrains its link to
2.5GT/s and shows "Speed 2.5GT/s (downgraded), Width x16" while nothing is
wrong (NVML documents the current link generation as reduced when the GPU is
not in use). So the idle GPU check judges what idling does not change - the
width and the link capability (LnkCap) - and the speed is judged under load by
pcie-bandwidth-gpu (host-to-device copy bandwidth of each GPU)."""

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
            out.append(
                f"{d['slot']} {d.get('model') or d['class']}: LnkSta expected {speed} {width}, "
                f"found {sta['speed']} {sta['width']}{mark}{capable}"
            )
    return out


def _idle_gpu_links(record: dict, speed: str, width: str, count: int) -> list[str]:
    devices = record["devices"]
    out = []
    if len(devices) != count:
        out.append(f"GPUs: expected {count} devices, found {len(devices)}")
    for d in devices:
        sta, cap = d.get("lnksta"), d.get("lnkcap")
        if sta is None or cap is None:
            if d.get("capabilities_access_denied"):
                raise ValueError(f"{d['slot']}: capabilities not readable (lspci -vv must run as root)")
            out.append(f"{d['slot']}: no LnkCap/LnkSta line (not a PCIe endpoint?)")
            continue
        name = f"{d['slot']} {d.get('model') or d['class']}"
        if cap["speed"] != speed or cap["width"] != width:
            out.append(f"{name}: LnkCap expected {speed} {width}, found {cap['speed']} {cap['width']}")
        if sta["width"] != width:
            mark = " (downgraded)" if sta.get("downgraded") else ""
            out.append(
                f"{name}: LnkSta width expected {width}, found {sta['width']}{mark} "
                f"(speed {sta['speed']}; LnkCap {cap['speed']} {cap['width']})"
            )
    return out


def pcie_link_gpu(record: Any, v: dict) -> list[str]:
    """Width and capability only: the speed of an idle GPU's link says nothing."""
    return _idle_gpu_links(
        record, str(v["pcie_gpu_speed"]), str(v["pcie_gpu_width"]), int(v["gpus_per_node"])
    )


def pcie_bandwidth_gpu(record: Any, v: dict) -> list[str]:
    """nvbandwidth host_to_device_memcpy_ce: every GPU at or above pcie_gpu_h2d_min_gbs.
    A link that trained at Gen3 or x8 carries about half of a Gen4 x16 link."""
    minimum, count = float(v["pcie_gpu_h2d_min_gbs"]), int(v["gpus_per_node"])
    index = record["by_name"].get("host_to_device_memcpy_ce")
    if index is None:
        names = [t["name"] for t in record["testcases"]]
        raise ValueError(
            "no host_to_device_memcpy_ce result in the nvbandwidth output "
            f"(found {', '.join(names) or 'none'})"
        )
    case = record["testcases"][index]
    columns = case["columns"]
    row = case["matrix"][0] if case["matrix"] else []
    out = []
    if len(columns) != count:
        out.append(f"GPUs measured: expected {count}, found {len(columns)}")
    for gpu, value in zip(columns, row):
        if value is None:
            out.append(f"GPU {gpu}: no host-to-device bandwidth (N/A)")
        elif value < minimum:
            out.append(
                f"GPU {gpu}: host-to-device {value:g} GB/s, expected ≥ {minimum:g} "
                "(a link at Gen3 or x8 under load carries about half)"
            )
    return out


def pcie_link_nic(record: Any, v: dict) -> list[str]:
    return _links(
        record,
        str(v["pcie_nic_speed"]),
        str(v["pcie_nic_width"]),
        int(v["mellanox_functions"]),
        "Mellanox functions",
    )


COMPARATORS = [
    Comparator(
        "pcie-link-gpu",
        "host",
        pcie_link_gpu,
        "every GPU link at pcie_gpu_width, LnkCap pcie_gpu_speed / pcie_gpu_width (speed judged under load)",
    ),
    Comparator(
        "pcie-bandwidth-gpu",
        "host",
        pcie_bandwidth_gpu,
        "every GPU's host-to-device copy bandwidth at or above pcie_gpu_h2d_min_gbs",
    ),
    Comparator(
        "pcie-link-nic", "host", pcie_link_nic, "every Mellanox function at pcie_nic_speed / pcie_nic_width"
    ),
]
