"""`dmidecode -t memory` / `-t 17` and `dmidecode -t bios` / `-t 0`.

`dmidecode-memory`:
  devices: [{locator, bank_locator, size_mb (null for "No Module Installed"),
             type, form_factor, speed_mts, configured_speed_mts, manufacturer,
             part_number, serial_number, rank, handle}]   one per Memory Device (type 17)
  populated (devices with a size), empty_slots, total_mb, sizes_mb (sorted distinct),
  arrays [{maximum_capacity, number_of_devices}] from type-16 blocks when present,
  smbios_version, elided
`dmidecode-bios`:
  vendor, version, release_date, bios_revision, firmware_revision, characteristics [...],
  system {manufacturer, product_name, ...} when the output also holds a System
  Information block (filtered full dmidecode pastes), smbios_version, elided

jc's dmidecode parser was tried: it returns [] for a paste without the "Handle"
line and keeps whole lines as descriptions when TABs were expanded to spaces,
so this module splits the blocks itself (any indentation, "..." elision lines).
"""

from __future__ import annotations

import re
from typing import Any

from ._hosttext import fail, int_or_none, lines_of
from .base import ParseError, Parser, Record

_HANDLE = re.compile(r"^Handle (?P<handle>0x[0-9A-Fa-f]+), DMI type (?P<type>\d+), (?P<bytes>\d+) bytes")
_SMBIOS = re.compile(r"^SMBIOS (?P<version>\d+\.\d+(?:\.\d+)?) present")
_ELISION = re.compile(r"^\s*(\.{3,}|…)\s*$")
_PREAMBLE = re.compile(
    r"^(# dmidecode |Getting SMBIOS data|SMBIOS .* present|Table at |"
    r"\d+ structures occupying|# SMBIOS entry point)"
)


def _blocks(text: str) -> tuple[list[dict[str, Any]], str | None, bool]:
    """Split into blocks: {title, handle, type, props {key: value | [items]}}."""
    blocks: list[dict[str, Any]] = []
    smbios = None
    elided = False
    handle: re.Match | None = None
    prop_indent: int | None = None
    last_key: str | None = None
    for line in lines_of(text):
        if not line.strip():
            continue
        stripped = line.strip()
        if _ELISION.match(line):
            elided = True
            handle = None
            continue
        expanded = line.expandtabs(8) if "\t" in line else line
        indent = len(expanded) - len(expanded.lstrip())
        if indent == 0:
            m = _SMBIOS.match(stripped)
            if m:
                smbios = m["version"]
            if _PREAMBLE.match(stripped):
                continue
            h = _HANDLE.match(stripped)
            if h:
                handle = h
                continue
            blocks.append(
                {
                    "title": stripped,
                    "handle": handle["handle"] if handle else None,
                    "type": int(handle["type"]) if handle else None,
                    "props": {},
                }
            )
            handle, prop_indent, last_key = None, None, None
            continue
        if not blocks:
            raise ParseError(f"dmidecode: indented line {stripped[:60]!r} before any block title")
        props = blocks[-1]["props"]
        if prop_indent is None:
            prop_indent = indent
        if indent > prop_indent and last_key is not None:
            # a sub-list item, e.g. under "Characteristics:"
            if not isinstance(props[last_key], list):
                props[last_key] = [] if props[last_key] == "" else [props[last_key]]
            props[last_key].append(stripped)
            continue
        key, sep, value = stripped.partition(":")
        if not sep:
            raise ParseError(
                f"dmidecode: expected 'Key: value' in block {blocks[-1]['title']!r}, found {stripped[:60]!r}"
            )
        last_key = key.strip()
        props[last_key] = value.strip()
    return blocks, smbios, elided


def _size_mb(value: str | None) -> int | None:
    """'8 GB' -> 8192, '16384 MB' -> 16384, 'No Module Installed' -> None."""
    m = re.fullmatch(r"(\d+)\s*(MB|GB|TB|kB)", value or "")
    if not m:
        return None
    return round(int(m.group(1)) * {"kB": 1 / 1024, "MB": 1, "GB": 1024, "TB": 1024 * 1024}[m.group(2)])


def _speed(value: str | None) -> int | None:
    m = re.fullmatch(r"(\d+)\s*(MT/s|MHz)", value or "")
    return int(m.group(1)) if m else None


def parse_memory(text: str) -> Record:
    blocks, smbios, elided = _blocks(text)
    found = [b for b in blocks if b["title"] == "Memory Device" or b["type"] == 17]
    if not found:
        fail("`dmidecode -t memory` blocks titled 'Memory Device'", text)
    devices = []
    for b in found:
        p = b["props"]
        devices.append(
            {
                "handle": b["handle"],
                "locator": p.get("Locator"),
                "bank_locator": p.get("Bank Locator"),
                "size_mb": _size_mb(p.get("Size")),
                "size": p.get("Size"),
                "type": p.get("Type"),
                "form_factor": p.get("Form Factor"),
                "speed_mts": _speed(p.get("Speed")),
                # dmidecode < 3.2 says "Configured Clock Speed"
                "configured_speed_mts": _speed(
                    p.get("Configured Memory Speed", p.get("Configured Clock Speed"))
                ),
                "manufacturer": p.get("Manufacturer"),
                "part_number": p.get("Part Number"),
                "serial_number": p.get("Serial Number"),
                "rank": int_or_none(p.get("Rank")),
            }
        )
    sizes = [d["size_mb"] for d in devices if d["size_mb"] is not None]
    arrays = [
        {
            "maximum_capacity": b["props"].get("Maximum Capacity"),
            "number_of_devices": int_or_none(b["props"].get("Number Of Devices")),
        }
        for b in blocks
        if b["title"] == "Physical Memory Array"
    ]
    return {
        "devices": devices,
        "populated": len(sizes),
        "empty_slots": len(devices) - len(sizes),
        "total_mb": sum(sizes),
        "sizes_mb": sorted(set(sizes)),
        "arrays": arrays,
        "smbios_version": smbios,
        "elided": elided,
    }


def parse_bios(text: str) -> Record:
    blocks, smbios, elided = _blocks(text)
    bios = next((b for b in blocks if b["title"] == "BIOS Information" or b["type"] == 0), None)
    if bios is None:
        fail("a `dmidecode -t bios` block titled 'BIOS Information'", text)
    p = bios["props"]
    system = next((b["props"] for b in blocks if b["title"] == "System Information"), None)
    chars = p.get("Characteristics")
    return {
        "vendor": p.get("Vendor"),
        "version": p.get("Version"),
        "release_date": p.get("Release Date"),
        "bios_revision": p.get("BIOS Revision"),
        "firmware_revision": p.get("Firmware Revision"),
        "rom_size": p.get("ROM Size"),
        "characteristics": chars if isinstance(chars, list) else [],
        "system": {k.lower().replace(" ", "_"): v for k, v in system.items()} if system else None,
        "smbios_version": smbios,
        "elided": elided,
    }


PARSERS = [
    Parser(
        name="dmidecode-memory",
        reads="dmidecode -t memory",
        func=parse_memory,
        description="DIMMs per slot: size, type, speed and configured speed, part numbers",
    ),
    Parser(
        name="dmidecode-bios",
        reads="dmidecode -t bios",
        func=parse_bios,
        description="BIOS vendor, version and release date",
    ),
]
