"""What is in the box: GPUs by PCI id (before any driver) and DIMMs."""

from __future__ import annotations

from typing import Any

from ..design import Comparator
from ._util import examples


def gpu_inventory(record: Any, v: dict) -> list[str]:
    """`lspci -nn -d 10de:`: gpus_per_node functions with id gpu_pci_id."""
    want_id = str(v["gpu_pci_id"]).lower()
    want = int(v["gpus_per_node"])
    devices = record["devices"]
    if devices and any("vendor_id" not in d for d in devices):
        raise ValueError("lspci output without [vendor:device] ids (run it with -nn)")
    match = [d for d in devices if f"{d['vendor_id']}:{d['device_id']}" == want_id]
    if len(match) == want:
        return []
    others = [
        f"{d['slot']} [{d['vendor_id']}:{d['device_id']}] {d.get('model') or d['description']}"
        for d in devices
        if d not in match
    ]
    extra = f"; other NVIDIA functions: {examples(others)}" if others else ""
    return [f"expected {want} x {want_id} ({v.get('gpu_model', 'GPU')}), found {len(match)}{extra}"]


def dimm_population(record: Any, v: dict) -> list[str]:
    """`dmidecode -t memory`: dimm_count DIMMs of dimm_size_gb, memory_total_gb in all."""
    count, size_mb = int(v["dimm_count"]), int(v["dimm_size_gb"]) * 1024
    total_mb = int(v["memory_total_gb"]) * 1024
    devices = record["devices"]
    if not devices:
        raise ValueError("no Memory Device entries in the output")
    out = []
    empty = [d["locator"] or d["bank_locator"] or "?" for d in devices if d["size_mb"] is None]
    if record["populated"] != count:
        where = f"; empty slots: {examples(empty)}" if empty else ""
        out.append(f"populated DIMMs: expected {count}, found {record['populated']}{where}")
    if record["total_mb"] != total_mb:
        out.append(f"total memory: expected {total_mb // 1024} GB, found {record['total_mb'] / 1024:g} GB")
    odd = [
        f"{d['locator']} {d['size_mb'] // 1024} GB"
        for d in devices
        if d["size_mb"] is not None and d["size_mb"] != size_mb
    ]
    if odd:
        out.append(f"DIMM size: expected {size_mb // 1024} GB each, found {examples(odd)}")
    return out


COMPARATORS = [
    Comparator("gpu-inventory", "host", gpu_inventory, "gpus_per_node GPUs with PCI id gpu_pci_id"),
    Comparator(
        "dimm-population", "host", dimm_population, "dimm_count x dimm_size_gb, memory_total_gb in all"
    ),
]
