"""`mst status` and `mst status -v` (NVIDIA/Mellanox MFT).

`started` is true when an MST kernel module is loaded (what `mst start` does);
without it mlxconfig cannot open /dev/mst devices. Plain `mst status` lists
/dev/mst devices with a `domain:bus:dev.fn=` line; `-v` prints a PCI devices
table whose NET column may be empty, so its rows are split by the header's
column positions, not by counting words.
"""

from __future__ import annotations

import re

from ._ib_common import bad_line, not_recognised, numbered
from .base import Parser, Record

TOOL = "mst-status"
_MODULE = re.compile(r"^MST (PCI configuration|PCI) module (is not loaded|loaded)$")
_DEVICE_LINE = re.compile(r"^(/dev/mst/\S+)\s+-\s+(.*?)\s*$")
_PCI_LINE = re.compile(r"domain:bus:dev\.fn=(\S+)")
_CHIP_REV = re.compile(r"^Chip revision is:\s*(\S+)$")
_SECTIONS = {"MST modules:": "modules", "MST devices:": "devices", "PCI devices:": "table"}
_NO_DEVICES = re.compile(r"^(No MST devices were found.*|You may need to run 'mst start'.*|-I- .*|-W- .*)$")
_COLUMNS = ("DEVICE_TYPE", "MST", "PCI", "RDMA", "NET", "NUMA")


def _na(value: str | None) -> str | None:
    value = (value or "").strip()
    return None if value in ("", "NA", "N/A", "-") else value


def _table_row(header: list[tuple[str, int]], line: str) -> dict[str, str]:
    """Give each word to the column whose header starts at or before it."""
    cells: dict[str, list[str]] = {name: [] for name, _ in header}
    for m in re.finditer(r"\S+", line):
        owner = header[0][0]
        for name, start in header:
            if m.start() >= start - 1:  # one column of slack for hand-aligned pastes
                owner = name
        cells[owner].append(m.group())
    return {name: " ".join(words) for name, words in cells.items()}


def _from_row(cells: dict[str, str]) -> Record:
    net = _na(cells.get("NET"))
    numa = _na(cells.get("NUMA"))
    return {
        "device_type": _na(cells.get("DEVICE_TYPE")),
        "device": _na(cells.get("MST")),
        "pci": _na(cells.get("PCI")),
        "rdma": _na(cells.get("RDMA")),
        "net": net[4:] if net and net.startswith("net-") else net,
        "numa": int(numa) if numa and re.fullmatch(r"-?\d+", numa) else None,
        "access": None,
        "chip_revision": None,
    }


def parse(text: str) -> Record:
    modules: dict[str, bool] = {}
    devices: list[Record] = []
    section = None
    header: list[tuple[str, int]] | None = None
    seen = False
    for lineno, line in numbered(text):
        stripped = line.strip()
        if not stripped or re.fullmatch(r"-+", stripped):
            continue
        if stripped in _SECTIONS:
            section, seen = _SECTIONS[stripped], True
            continue
        if m := _MODULE.match(stripped):
            key = "pci_configuration" if m.group(1) == "PCI configuration" else "pci"
            modules[key] = m.group(2) == "loaded"
            seen = True
        elif section == "devices" and (m := _DEVICE_LINE.match(stripped)):
            devices.append(
                {
                    "device": m.group(1),
                    "access": m.group(2).rstrip("."),
                    "pci": None,
                    "chip_revision": None,
                    "device_type": None,
                    "rdma": None,
                    "net": None,
                    "numa": None,
                }
            )
        elif section == "devices" and devices and (m := _PCI_LINE.search(stripped)):
            devices[-1]["pci"] = m.group(1)
        elif section == "devices" and devices and (m := _CHIP_REV.match(stripped)):
            devices[-1]["chip_revision"] = m.group(1)
        elif section == "table" and stripped.split()[0] == "DEVICE_TYPE":
            header = [(w.group(), w.start()) for w in re.finditer(r"\S+", line)]
            if [name for name, _ in header] != list(_COLUMNS)[: len(header)]:
                raise bad_line(TOOL, lineno, "the header " + " ".join(_COLUMNS), line)
        elif section == "table" and header:
            devices.append(_from_row(_table_row(header, line)))
        elif _NO_DEVICES.match(stripped):
            continue
        else:
            raise bad_line(TOOL, lineno, "an `mst status` line (MST modules / devices)", line)
    if not seen:
        raise not_recognised(TOOL, "'MST modules:' / 'MST devices:' / 'PCI devices:' sections", text)
    return {
        "started": any(modules.values()),
        "modules": modules,
        "devices": devices,
        "count": len(devices),
        "verbose": header is not None,
    }


PARSERS = [
    Parser(
        name="mst-status",
        reads="mst status [-v]",
        func=parse,
        description="MST devices: /dev/mst path, PCI address, RDMA and net names, NUMA node",
    )
]
