"""`mlxlink -d DEV [-p PORT] [-m] [-c] [-e] [--show_module]`: a port's link as the
adapter firmware sees it.

Record:
  state ("Active"), physical_state ("LinkUp"), speed as printed ("IB-HDR", "100G"),
  protocol ("IB" | "Ethernet"), speed_name ("HDR" | null for Ethernet), width ("4x"),
  lanes (4), fec ("RS-FEC - (544,514) + PLR", "Standard RS-FEC - RS(528,514)", "No FEC"),
  loopback_mode, auto_negotiation,
  enabled_link_speeds, supported_cable_speeds: ["HDR", "EDR", ...] (from "0x00000075 (HDR,...)"),
  status_opcode (int | null), recommendation, firmware_version, amber_version, mft_version,
  ber: {effective_errors, effective_ber, raw_ber, raw_errors_per_lane: [ints],
        symbol_errors, symbol_ber, link_down_counter, link_error_recovery_counter,
        time_since_last_clear_min} - numbers (BER as floats: "15E-255" -> 1.5e-254),
        null each when the counters section (-c) was not printed
  module: {identifier, compliance, cable_technology, cable_type, vendor_name,
           vendor_part_number, vendor_serial_number, transfer_distance_m,
           rx_los_per_lane, rx_cdr_lol_per_lane, tx_fault_per_lane: [ints] | null,
           temperature_c (str as printed)} | null (no -m / --show_module)
  sections: {"operational_info": {snake_key: value}, ...} every section as printed
  tool_errors: the "-E- ..." lines mlxlink printed (e.g. an option not supported on a HCA)
Values keep mlxlink's trailing-space quirk out (MFT 4.35 prints one after each value).
"""

from __future__ import annotations

import re

from ._hosttext import fail, float_or_none, int_or_none, lines_of, snake
from .base import ParseError, Parser, Record

_KV = re.compile(r"^(?P<key>\S.*?)\s*:\s?(?P<value>.*)$")
_DASHES = re.compile(r"-+")
_RULE = re.compile(r"-{3,}")


def _speeds(value: str | None) -> list[str]:
    m = re.search(r"\(([^)]*)\)", value or "")
    return [s.strip() for s in m.group(1).split(",") if s.strip()] if m else []


def _first(section: dict[str, str], prefix: str) -> str | None:
    """Newer MFT prints "Enabled Link Speed (Ext.)" for the extended speed mask."""
    return next((v for k, v in section.items() if k.startswith(prefix)), None)


def _ints(value: str | None) -> list[int] | None:
    if not value or not re.fullmatch(r"\d+(,\d+)*", value.strip()):
        return None
    return [int(x) for x in value.split(",")]


def _ber(value: str | None) -> float | None:
    if value is None or not re.fullmatch(r"\d+(?:\.\d+)?[Ee][-+]?\d+|\d+(?:\.\d+)?", value.strip()):
        return None
    return float(value)


def parse_mlxlink(text: str) -> Record:
    lines = [ln.rstrip() for ln in lines_of(text)]
    sections: dict[str, dict[str, str]] = {}
    errors: list[str] = []
    current: dict[str, str] | None = None
    for i, line in enumerate(lines):
        s = line.strip()
        if not s or _DASHES.fullmatch(s):
            continue
        if s.startswith("-E-") or s.startswith("-W-"):
            errors.append(s)
            continue
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if ":" not in s and _RULE.fullmatch(nxt):
            current = sections.setdefault(snake(s), {})
            continue
        m = _KV.match(s)
        if m and current is not None:
            current[snake(m["key"])] = m["value"].strip()
    op = sections.get("operational_info")
    if not op or "state" not in op:
        if errors:
            raise ParseError(f"mlxlink: the tool reported an error: {errors[0][:160]!r}")
        fail("`mlxlink -d DEV` output with an 'Operational Info' section", text)
    sup = sections.get("supported_info", {})
    trouble = sections.get("troubleshooting_info", {})
    tool = sections.get("tool_information", {})
    counters = sections.get("physical_counters_and_ber_info")
    module = sections.get("module_info")
    speed = op.get("speed")
    width = op.get("width")
    ib = bool(speed and speed.upper().startswith("IB-"))
    record: Record = {
        "state": op.get("state"),
        "physical_state": op.get("physical_state"),
        "speed": speed,
        "protocol": "IB" if ib else ("Ethernet" if speed else None),
        "speed_name": speed[3:] if ib else None,
        "width": width,
        "lanes": int_or_none((width or "").rstrip("xX")),
        "fec": op.get("fec"),
        "loopback_mode": op.get("loopback_mode"),
        "auto_negotiation": op.get("auto_negotiation"),
        "enabled_link_speeds": _speeds(_first(sup, "enabled_link_speed")),
        "supported_cable_speeds": _speeds(_first(sup, "supported_cable_speed")),
        "status_opcode": int_or_none(trouble.get("status_opcode")),
        "recommendation": trouble.get("recommendation"),
        "firmware_version": tool.get("firmware_version"),
        "amber_version": tool.get("amber_version"),
        "mft_version": (tool.get("mft_version") or "").replace("mft ", "") or None,
        "ber": {
            "effective_errors": int_or_none((counters or {}).get("effective_physical_errors")),
            "effective_ber": _ber((counters or {}).get("effective_physical_ber")),
            "raw_ber": _ber((counters or {}).get("raw_physical_ber")),
            "raw_errors_per_lane": _ints((counters or {}).get("raw_physical_errors_per_lane")),
            "symbol_errors": int_or_none((counters or {}).get("symbol_errors")),
            "symbol_ber": _ber((counters or {}).get("symbol_ber")),
            "link_down_counter": int_or_none((counters or {}).get("link_down_counter")),
            "link_error_recovery_counter": int_or_none((counters or {}).get("link_error_recovery_counter")),
            "time_since_last_clear_min": float_or_none((counters or {}).get("time_since_last_clear_min")),
        },
        "module": None,
        "sections": sections,
        "tool_errors": errors,
    }
    if module is not None:
        record["module"] = {
            "identifier": module.get("identifier"),
            "compliance": module.get("compliance"),
            "cable_technology": module.get("cable_technology"),
            "cable_type": module.get("cable_type"),
            "vendor_name": module.get("vendor_name"),
            "vendor_part_number": module.get("vendor_part_number"),
            "vendor_serial_number": module.get("vendor_serial_number"),
            "transfer_distance_m": module.get("transfer_distance_m"),
            "temperature_c": module.get("temperature_c"),
            "rx_los_per_lane": _ints(module.get("rx_los_per_lane")),
            "rx_cdr_lol_per_lane": _ints(module.get("rx_cdr_lol_per_lane")),
            "tx_fault_per_lane": _ints(module.get("tx_fault_per_lane")),
        }
    return record


PARSERS = [
    Parser(
        name="mlxlink",
        reads="mlxlink -d DEV [-p PORT] [-m] [-c] [-e]",
        func=parse_mlxlink,
        description="mlxlink: port state, speed/width, FEC, effective/raw BER and counters, "
        "module (cable) info, recommendation",
    )
]
