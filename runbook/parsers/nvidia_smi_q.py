"""`nvidia-smi -q` / `-a` / `-q -d SECTION` / `-q -i N`: the indented key : value report.

Record:
  driver_version, cuda_version (null on old drivers that print no such line),
  timestamp, attached_gpus (the count nvidia-smi states; with `-i N` only one GPU
  section follows), gpu_count (sections actually present)
  gpus: [{bus_id, product_name, serial, uuid, vbios_version,
          pcie: {gen_max, gen_current, width_max, width_current},   ints or null
          fb_memory_total_mib, fb_memory_used_mib,
          fields: the whole section as a nested dict with snake_case keys,
                  e.g. fields.pci.gpu_link_info.pcie_generation.current == "1"}]

Indentation is 4 spaces per level in every driver seen (375 .. 580); the key
column width differs (values at col 38, 44 or 57), so keys are split at the
first " : " or a line ending in " :" rather than at a fixed column. A key
repeated in one section becomes a list of its values.
"""
from __future__ import annotations

import re
from typing import Any

from ._hosttext import fail, int_or_none, lines_of, number_with_unit, snake
from .base import ParseError, Parser, Record

_KV = re.compile(r"^(?P<indent> *)(?P<key>\S.*?)\s+:(?: (?P<value>.*))?$")
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


def parse_nvidia_smi_q(text: str) -> Record:
    lines = lines_of(text)
    if not any("NVSMI LOG" in l for l in lines[:5]):
        fail("the `nvidia-smi -q` banner '==============NVSMI LOG=============='", text)
    sections: list[tuple[str, list[str]]] = []
    top: list[str] = []
    for line in lines:
        m = _GPU.match(line)
        if m:
            sections.append((m["bus"], []))
        elif sections:
            sections[-1][1].append(line)
        elif "NVSMI LOG" not in line:
            top.append(line)
    head = _tree(top, "before the first GPU") if any(l.strip() for l in top) else {}
    if "driver_version" not in head:
        fail("'Driver Version : ...' near the top of `nvidia-smi -q`", text)
    gpus = []
    for bus_id, body in sections:
        fields = _tree(body, f"GPU {bus_id}")
        link = _get(fields, "pci", "gpu_link_info") or {}
        gpus.append({
            "bus_id": bus_id,
            "product_name": fields.get("product_name"),
            "serial": fields.get("serial_number"),
            "uuid": fields.get("gpu_uuid"),
            "vbios_version": fields.get("vbios_version"),
            "pcie": {
                "gen_max": int_or_none(_get(link, "pcie_generation", "max")),
                "gen_current": int_or_none(_get(link, "pcie_generation", "current")),
                "width_max": _x(_get(link, "link_width", "max")),
                "width_current": _x(_get(link, "link_width", "current")),
            },
            "fb_memory_total_mib": _mib(_get(fields, "fb_memory_usage", "total")),
            "fb_memory_used_mib": _mib(_get(fields, "fb_memory_usage", "used")),
            "fields": fields,
        })
    return {
        "timestamp": head.get("timestamp"),
        "driver_version": head.get("driver_version"),
        "cuda_version": head.get("cuda_version"),
        "attached_gpus": int_or_none(head.get("attached_gpus")),
        "gpu_count": len(gpus),
        "gpus": gpus,
    }


PARSERS = [Parser(name="nvidia-smi-q", reads="nvidia-smi -q", func=parse_nvidia_smi_q,
           description="nvidia-smi -q per GPU: identity, PCI link, ECC, retired pages, remapped rows, clocks reasons, power")]
