"""GPU health against the design: ECC and row remapping (`nvidia-smi -q -d
ECC,PAGE_RETIREMENT,ROW_REMAPPER`), BAR1 size (`-q -d MEMORY`), Xids in the
kernel log (`dmesg`), DCGM's diagnostic (`dcgmi diag`) and the PCIe copy
bandwidth (`nvbandwidth`). Each mismatch names the GPU (its PCI address as the
tool prints it) and what was found."""

from __future__ import annotations

from typing import Any

from ..design import Comparator
from ._util import examples


def _gpus(record: Any, v: dict) -> tuple[list[dict], list[str]]:
    gpus = record.get("gpus") or []
    if not gpus:
        raise ValueError("nvidia-smi -q shows no GPU section")
    want = int(v.get("gpus_per_node", len(gpus)))
    out = [] if len(gpus) == want else [f"{want} GPUs expected, nvidia-smi reports {len(gpus)}"]
    return gpus, out


def _uncorrectable(counts: dict | None) -> int:
    if not counts:
        return 0
    parts = [counts.get(k) for k in ("dram_uncorrectable", "sram_uncorrectable")]
    if all(p is None for p in parts):
        parts = [counts.get("uncorrectable")]
    return sum(p for p in parts if isinstance(p, int))


def gpu_ecc(record: Any, v: dict) -> list[str]:
    gpus, out = _gpus(record, v)
    for g in gpus:
        gpu = f"GPU {g.get('bus_id') or '?'}"
        ecc = g.get("ecc")
        if ecc is None:
            out.append(f"{gpu}: no ECC section (not read)")
            continue
        if ecc.get("mode_current") != "Enabled":
            out.append(f"{gpu}: ECC {ecc.get('mode_current')} (expected Enabled)")
        vol, agg = _uncorrectable(ecc.get("volatile")), _uncorrectable(ecc.get("aggregate"))
        if vol or agg:
            out.append(
                f"{gpu}: uncorrectable ECC errors: {vol} since boot, {agg} in its lifetime (expected 0)"
            )
        rows = g.get("remapped_rows") or {}
        if rows.get("pending"):
            out.append(f"{gpu}: row remapping pending (applied at the next GPU reset)")
        if rows.get("failure"):
            out.append(f"{gpu}: row remapping failure occurred (no spare rows: RMA)")
        pages = g.get("retired_pages") or {}
        if pages.get("pending"):
            out.append(f"{gpu}: page retirement pending")
    return out


def gpu_bar1(record: Any, v: dict) -> list[str]:
    gpus, out = _gpus(record, v)
    want = int(v["gpu_bar1_mib"])
    by_size: dict[str, list[str]] = {}  # found -> GPUs, so eight GPUs with the BIOS default read as one line
    for g in gpus:
        found = g.get("bar1_total_mib")
        if found is None or int(found) != want:
            by_size.setdefault("not read" if found is None else f"{found} MiB", []).append(
                g.get("bus_id") or "?"
            )
    for found, bus_ids in by_size.items():
        out.append(
            f"{len(bus_ids)} of {len(gpus)} GPUs: BAR1 expected {want} MiB, found {found} "
            f"({examples(bus_ids)})"
        )
    return out


def gpu_xid(record: Any, v: dict) -> list[str]:
    seen: dict[tuple[str, int], list[dict]] = {}
    for e in record.get("events", []):
        seen.setdefault((e.get("pci") or "?", e["xid"]), []).append(e)
    out = []
    for (pci, xid), events in seen.items():
        first = events[0]
        what = first.get("meaning") or f"unknown Xid ({first.get('message', '')[:60]})"
        times = f" ×{len(events)}" if len(events) > 1 else ""
        action = f"; {first['action']}" if first.get("action") else ""
        out.append(f"Xid {xid}{times} on GPU PCI:{pci}: {what}{action}")
    return out


def dcgm_diag(record: Any, v: dict) -> list[str]:
    tests = record.get("tests") or []
    if not tests:
        raise ValueError("dcgmi diag printed no test result")
    out = []
    for t in tests:
        if t.get("result") not in ("Fail", "Warn"):
            continue
        gpus = ", ".join(f"GPU{g}" for g in t.get("failed_gpus") or [])
        texts = "; ".join(m["text"] for m in t.get("messages") or [] if m.get("text"))
        out.append(
            f"{t.get('category') or ''} {t['name']}: {t['result']}".strip()
            + (f" on {gpus}" if gpus else "")
            + (f" — {texts}" if texts else "")
        )
    for m in record.get("messages") or []:
        out.append(f"{m.get('level', 'error')}: {m.get('text', '')}")
    if not record.get("complete", True):
        out.append("the result table is incomplete (cut off)")
    return out


def gpu_copy_bandwidth(record: Any, v: dict) -> list[str]:
    minimum = float(v["gpu_pcie_min_gbps"])
    cases = record.get("testcases") or []
    if not cases:
        raise ValueError("nvbandwidth printed no test case")
    out = []
    for case in cases:
        low = []
        # device->device matrices have GPU labels on both axes (the diagonal is N/A, or 0.00 in
        # early builds); host<->device ones have the CPU as their row
        peer = str(case["name"]).startswith("device_to_device")
        for r, row in zip(case["rows"], case["matrix"]):
            for c, value in zip(case["columns"], row):
                if value is not None and not (peer and str(r) == str(c)) and value < minimum:
                    low.append(f"{r}→{c} {value:.2f}")
        if low:
            shown = ", ".join(low[:6]) + (f" and {len(low) - 6} more" if len(low) > 6 else "")
            out.append(f"{case['name']}: expected ≥ {minimum:g} GB/s, found {shown} (row→column GB/s)")
    return out


COMPARATORS = [
    Comparator(
        "gpu-ecc", "host", gpu_ecc, "ECC enabled, no uncorrectable error, no pending or failed row remap"
    ),
    Comparator("gpu-bar1", "host", gpu_bar1, "every GPU's BAR1 size equals gpu_bar1_mib"),
    Comparator("gpu-xid", "host", gpu_xid, "no Xid in the kernel log; each one found named with its meaning"),
    Comparator("dcgm-diag", "host", dcgm_diag, "no DCGM test Fail or Warn, no error message"),
    Comparator(
        "gpu-copy-bandwidth",
        "host",
        gpu_copy_bandwidth,
        "every nvbandwidth copy at or above gpu_pcie_min_gbps",
    ),
]
