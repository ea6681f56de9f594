"""`nvidia-smi -q` / `-a` / `-q -d SECTION` / `-q -i N`: the indented key : value report.

Record:
  driver_version, cuda_version (null on old drivers that print no such line; drivers 610+
  print them as "KMD Version" / "CUDA UMD Version", read into the same two keys),
  timestamp, attached_gpus (the count nvidia-smi states; with `-i N` only one GPU
  section follows), gpu_count (sections actually present)
  gpus: [{bus_id, product_name, serial, uuid, vbios_version,
          pcie: {gen_max, gen_current, width_max, width_current},   ints or null
          fb_memory_total_mib, fb_memory_used_mib, bar1_total_mib, bar1_used_mib,
          persistence_mode ("Enabled"/"Disabled"), performance_state ("P0"),
          pcie also has gen_device_max, gen_device_current (r550+ "Device Max/Current"),
          ecc: {mode_current, mode_pending,
                volatile, aggregate: {correctable, uncorrectable, sram_correctable,
                    sram_uncorrectable, dram_correctable, dram_uncorrectable} (ints, null = N/A;
                    the pre-r510 "Single Bit / Double Bit ... Total" layout fills
                    correctable / uncorrectable only),
                sram_threshold_exceeded (bool | null)} | null when the section is absent,
          retired_pages: {single_bit, double_bit (ints | null), pending (bool | null)} | null,
          remapped_rows: {correctable, uncorrectable (ints), pending, failure (bools),
                          histogram: {max, high, partial, low, none} (banks)} | null,
          clocks_reasons: {idle, applications_clocks_setting, sw_power_cap, hw_slowdown,
                           hw_thermal_slowdown, hw_power_brake_slowdown, sync_boost,
                           sw_thermal_slowdown, display_clock_setting, ...: bool (Active)} | null,
          clocks_reasons_active: [the Active ones], clocks_reasons_section: the section's
                 name, "Clocks Event Reasons" (r530+) or "Clocks Throttle Reasons" (older),
          power: {draw_w, limit_w (current / enforced), requested_limit_w, default_limit_w,
                  min_limit_w, max_limit_w} | null   ("GPU Power Readings" r530+, "Power
                  Readings" older; "Instantaneous/Average Power Draw" r570+),
          fields: the whole section as a nested dict with snake_case keys,
                  e.g. fields.pci.gpu_link_info.pcie_generation.current == "1"}]

Indentation is 4 spaces per level in every driver seen (375 .. 580); the key
column width differs (values at col 38, 44 or 57), so keys are split at the
first " : " or a line ending in " :" rather than at a fixed column. A key
repeated in one section becomes a list of its values.

Lenient mode (a pasted excerpt): no banner, no Driver Version, "[...]" elision lines,
a section (e.g. `nvidia-smi -q | grep -A8 'Clocks Throttle'`) without its GPU line:
read as far as it goes (bus_id null for a GPU whose line is missing).
"""

from __future__ import annotations

import re
from typing import Any

from ._hosttext import fail, int_or_none, lines_of, number_with_unit, snake
from .base import Gaps, ParseError, Parser, Record, strict_gaps

_KV = re.compile(r"^(?P<indent> *)(?P<key>\S.*?)\s+:(?: (?P<value>.*))?$")
_ELISION = re.compile(r"^\s*(?:\[\.\.\.\]|\.{3,}|…)\s*$")
_BANKS = re.compile(r"\s*(\d+)(?:\s+bank\(s\))?\s*")
# Keys of a GPU section: a headerless paste must hold at least one to be -q output.
_GPU_KEYS = (
    "product_name",
    "ecc_errors",
    "ecc_mode",
    "clocks_event_reasons",
    "clocks_throttle_reasons",
    "remapped_rows",
    "retired_pages",
    "pci",
    "gpu_power_readings",
    "power_readings",
    "fb_memory_usage",
    "performance_state",
    "persistence_mode",
    "max_clocks",
    "clocks",
)
_GPU = re.compile(r"^GPU (?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*$")


def _put(node: dict[str, Any], key: str, value: Any) -> None:
    if key in node:
        old = node[key]
        node[key] = (old if isinstance(old, list) else [old]) + [value]
    else:
        node[key] = value


def _tree(lines: list[str], where: str) -> dict[str, Any]:
    """Nest indented lines: a line without ' : ' opens a sub-section."""
    root: dict[str, Any] = {}
    stack: list[tuple[int, dict[str, Any]]] = [(-1, root)]
    for line in lines:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        m = _KV.match(line.rstrip())
        if m:
            _put(parent, snake(m["key"]), (m["value"] or "").strip())
        else:
            child: dict[str, Any] = {}
            _put(parent, snake(line), child)
            stack.append((indent, child))
    if not root:
        raise ParseError(f"nvidia-smi -q: empty section {where}")
    return root


def _get(node: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _x(value: Any) -> int | None:
    """'16x' -> 16."""
    if isinstance(value, str) and value.endswith("x"):
        return int_or_none(value[:-1])
    return None


def _mib(value: Any) -> int | None:
    number = number_with_unit(value, "MiB") if isinstance(value, str) else None
    return int(number) if number is not None else None


def _count(value: Any) -> int | None:
    """'0' -> 0, '639 bank(s)' -> 639, 'N/A' -> None."""
    if not isinstance(value, str):
        return None
    m = _BANKS.fullmatch(value)
    return int(m.group(1)) if m else None


def _yes(value: Any) -> bool | None:
    if not isinstance(value, str):
        return None
    return {"yes": True, "no": False, "active": True, "not active": False}.get(value.strip().lower())


def _total(*values: int | None) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _ecc_scope(node: Any) -> Record | None:
    if not isinstance(node, dict):
        return None
    if "single_bit" in node or "double_bit" in node:  # pre-r510 layout
        single, double = _count(_get(node, "single_bit", "total")), _count(_get(node, "double_bit", "total"))
        return {
            "correctable": single,
            "uncorrectable": double,
            "sram_correctable": None,
            "sram_uncorrectable": None,
            "dram_correctable": None,
            "dram_uncorrectable": None,
        }
    sram_c = _count(node.get("sram_correctable"))
    sram_u = _count(node.get("sram_uncorrectable"))
    if sram_u is None:  # r535+: split into parity and SEC-DED
        sram_u = _total(
            _count(node.get("sram_uncorrectable_parity")), _count(node.get("sram_uncorrectable_sec_ded"))
        )
    dram_c, dram_u = _count(node.get("dram_correctable")), _count(node.get("dram_uncorrectable"))
    return {
        "correctable": _total(sram_c, dram_c),
        "uncorrectable": _total(sram_u, dram_u),
        "sram_correctable": sram_c,
        "sram_uncorrectable": sram_u,
        "dram_correctable": dram_c,
        "dram_uncorrectable": dram_u,
    }


def _ecc(fields: dict) -> Record | None:
    errors, mode = fields.get("ecc_errors"), fields.get("ecc_mode")
    if not isinstance(errors, dict) and not isinstance(mode, dict):
        return None
    errors = errors if isinstance(errors, dict) else {}
    return {
        "mode_current": _get(mode, "current"),
        "mode_pending": _get(mode, "pending"),
        "volatile": _ecc_scope(errors.get("volatile")),
        "aggregate": _ecc_scope(errors.get("aggregate")),
        "sram_threshold_exceeded": _yes(_get(errors, "aggregate", "sram_threshold_exceeded")),
    }


def _retired(fields: dict) -> Record | None:
    node = fields.get("retired_pages")
    if not isinstance(node, dict):
        return None
    single = node.get("single_bit_ecc")
    double = node.get("double_bit_ecc")
    # Some drivers nest "Single Bit ECC" / "Double Bit ECC" as sections with a Count line.
    single = _get(single, "count") if isinstance(single, dict) else single
    double = _get(double, "count") if isinstance(double, dict) else double
    pending = node.get("pending_page_blacklist", node.get("pending_page_retirement", node.get("pending")))
    return {"single_bit": _count(single), "double_bit": _count(double), "pending": _yes(pending)}


def _remapped(fields: dict) -> Record | None:
    node = fields.get("remapped_rows")
    if not isinstance(node, dict):
        return None
    histogram = node.get("bank_remap_availability_histogram")
    return {
        "correctable": _count(node.get("correctable_error")),
        "uncorrectable": _count(node.get("uncorrectable_error")),
        "pending": _yes(node.get("pending")),
        "failure": _yes(node.get("remapping_failure_occurred")),
        "histogram": (
            {k: _count(histogram.get(k)) for k in ("max", "high", "partial", "low", "none")}
            if isinstance(histogram, dict)
            else None
        ),
    }


def _reasons(fields: dict) -> tuple[Record | None, str | None]:
    for key, name in (
        ("clocks_event_reasons", "Clocks Event Reasons"),
        ("clocks_throttle_reasons", "Clocks Throttle Reasons"),
    ):
        node = fields.get(key)
        if isinstance(node, dict):
            return {k: _yes(v) for k, v in node.items() if _yes(v) is not None}, name
    return None, None


def _watts(value: Any) -> float | None:
    return number_with_unit(value, "W") if isinstance(value, str) else None


def _power(fields: dict) -> Record | None:
    node = fields.get("gpu_power_readings", fields.get("power_readings"))
    if not isinstance(node, dict):
        return None

    def first(*keys: str) -> float | None:
        return next((w for w in (_watts(node.get(k)) for k in keys) if w is not None), None)

    return {
        "draw_w": first("power_draw", "instantaneous_power_draw", "average_power_draw"),
        "limit_w": first("current_power_limit", "enforced_power_limit", "power_limit"),
        "requested_limit_w": first("requested_power_limit"),
        "default_limit_w": first("default_power_limit"),
        "min_limit_w": first("min_power_limit"),
        "max_limit_w": first("max_power_limit"),
    }


def _gpu(bus_id: str | None, fields: dict) -> Record:
    link = _get(fields, "pci", "gpu_link_info") or {}
    reasons, section = _reasons(fields)
    return {
        "bus_id": bus_id,
        "product_name": fields.get("product_name"),
        "serial": fields.get("serial_number"),
        "uuid": fields.get("gpu_uuid"),
        "vbios_version": fields.get("vbios_version"),
        "persistence_mode": fields.get("persistence_mode"),
        "performance_state": fields.get("performance_state"),
        "pcie": {
            "gen_max": int_or_none(_get(link, "pcie_generation", "max")),
            "gen_current": int_or_none(_get(link, "pcie_generation", "current")),
            "gen_device_max": int_or_none(_get(link, "pcie_generation", "device_max")),
            "gen_device_current": int_or_none(_get(link, "pcie_generation", "device_current")),
            "width_max": _x(_get(link, "link_width", "max")),
            "width_current": _x(_get(link, "link_width", "current")),
        },
        "fb_memory_total_mib": _mib(_get(fields, "fb_memory_usage", "total")),
        "fb_memory_used_mib": _mib(_get(fields, "fb_memory_usage", "used")),
        "bar1_total_mib": _mib(_get(fields, "bar1_memory_usage", "total")),
        "bar1_used_mib": _mib(_get(fields, "bar1_memory_usage", "used")),
        "ecc": _ecc(fields),
        "retired_pages": _retired(fields),
        "remapped_rows": _remapped(fields),
        "clocks_reasons": reasons,
        "clocks_reasons_active": [k for k, v in (reasons or {}).items() if v],
        "clocks_reasons_section": section,
        "power": _power(fields),
        "fields": fields,
    }


def parse_nvidia_smi_q(text: str, *, gaps: Gaps | None = None) -> Record:
    gaps = strict_gaps(gaps, "nvidia-smi -q")
    lines = lines_of(text)
    elided = any(_ELISION.match(ln) for ln in lines)
    lines = [ln for ln in lines if not _ELISION.match(ln)]
    banner = any("NVSMI LOG" in ln for ln in lines[:5])
    sections: list[tuple[str | None, list[str]]] = []
    top: list[str] = []
    for line in lines:
        m = _GPU.match(line)
        if m:
            sections.append((m["bus"], []))
        elif sections:
            sections[-1][1].append(line)
        elif "NVSMI LOG" not in line:
            top.append(line)
    try:
        head = _tree(top, "before the first GPU") if any(ln.strip() for ln in top) else {}
    except ParseError:
        head = {}
    if not banner and not gaps.lenient:
        fail("the `nvidia-smi -q` banner '==============NVSMI LOG=============='", text)
    # A paste without the "GPU 0000:..:..." line: the indented GPU keys sit in `top`.
    loose = {k: v for k, v in head.items() if k in _GPU_KEYS}
    if not banner:
        if not sections and not loose:
            fail(
                "the `nvidia-smi -q` banner '==============NVSMI LOG==============' or its GPU sections", text
            )
        gaps.missing("the banner '==============NVSMI LOG=============='")
    # Drivers 610+: "KMD Version" / "CUDA UMD Version", the old names kept for a while with
    # " [Deprecated; ... Use KMD Version instead]" after the value, or dropped.
    for new, old in (("kmd_version", "driver_version"), ("cuda_umd_version", "cuda_version")):
        if isinstance(head.get(old), str):
            head[old] = head[old].split(" [", 1)[0].strip()
        if isinstance(head.get(new), str) and head[new]:
            head[old] = head[new]
    if "driver_version" not in head:
        if banner and not gaps.lenient:
            fail("'Driver Version : ...' near the top of `nvidia-smi -q`", text)
        gaps.missing("the 'Driver Version' line")
    gpus = []
    if loose and not sections:
        gaps.missing("the 'GPU 00000000:XX:00.0' line of the section")
        gpus.append(_gpu(None, loose))
    for bus_id, body in sections:
        gpus.append(_gpu(bus_id, _tree(body, f"GPU {bus_id}")))
    if elided:
        gaps.missing("lines elided ('[...]') from the report")
    return {
        "timestamp": head.get("timestamp"),
        "driver_version": head.get("driver_version"),
        "cuda_version": head.get("cuda_version"),
        "attached_gpus": int_or_none(head.get("attached_gpus")),
        "gpu_count": len(gpus),
        "gpus": gpus,
    }


PARSERS = [
    Parser(
        name="nvidia-smi-q",
        reads="nvidia-smi -q",
        func=parse_nvidia_smi_q,
        lenient=True,
        description="nvidia-smi -q per GPU: identity, PCI link, ECC, retired pages, remapped rows, clocks reasons, power",
    )
]
