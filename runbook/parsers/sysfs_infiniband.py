"""Values read from /sys/class/infiniband (and a device's numa_node).

Four parsers, one per attribute:
  sysfs-link-layer  .../ports/N/link_layer   InfiniBand | Ethernet | Unknown
  sysfs-port-state  .../ports/N/state        "4: ACTIVE" (also phys_state "5: LinkUp")
  sysfs-pkeys       .../ports/N/pkeys/I      0x8100
  sysfs-numa-node   .../device/numa_node     0, 1, -1 (no affinity); also
                    /sys/bus/pci/devices/SLOT/numa_node and `lspci -vv | grep NUMA`

Shapes read (all three may mix in one output):
  1. the bare value, as `cat ONE_FILE` prints it;
  2. a transcript: command lines ("# cat PATH", "user@host:~$ cat PATH", "cat PATH")
     each followed by its value - the device and port come from the path;
  3. `grep . /sys/class/infiniband/*/ports/*/link_layer` (or `grep -H`):
     "PATH:VALUE" per line - the recommended verify command, one line per port.

Record (every parser):
  entries: [{path, device, port, value, ...}]   device/port null when unknown
  count, distinct (sorted distinct values)
  value: the common value when every entry agrees, else null (look at entries)
  by_device: {"mlx5_0": {"1": value}} (port attributes) or {"mlx5_0": value} (numa_node)
sysfs-pkeys adds: pkeys (non-zero, in index order), membership {"0x000b": "full" |
  "limited"} keyed by the 15-bit partition number, by_device {"mlx5_0": {"1": [non-zero
  pkeys]}}, by_index {"0": "0x800b"} when
  all values come from one port (else null), and per entry index/partition/full.
sysfs-port-state values are the state names ("ACTIVE"); each entry keeps `code` (4).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ._hosttext import fail, lines_of
from .base import ParseError, Parser, Record

_COMMAND = re.compile(r"^(?:.*?[#$%>]\s*)?(?:sudo\s+)?(?P<cmd>(?:cat|grep|head|tail|more|lspci)\s.*)$")
_GREP_LINE = re.compile(
    r"^(?P<path>/sys/\S*?/(?P<attr>link_layer|phys_state|state|numa_node|pkeys/\d+|gids/\d+|rate)):(?P<value>.*)$"
)
_IB_PATH = re.compile(r"/sys/class/infiniband/(?P<dev>[^/\s]+)/(?:ports/(?P<port>[^/\s]+)/)?")
_PCI_PATH = re.compile(r"/sys/bus/pci/devices/(?P<dev>[^/\s]+)/")
_NET_PATH = re.compile(r"/sys/class/net/(?P<dev>[^/\s]+)/")
_LSPCI_SLOT = re.compile(r"\blspci\b.*?-s\s*(?P<dev>\S+)")
_PATH_IN_CMD = re.compile(r"(/sys/\S+)")


def _read(text: str) -> list[Record]:
    """One entry {path, device, port, attr, value} per value line, whatever the shape."""
    entries: list[Record] = []
    command: str | None = None
    for line in lines_of(text):
        s = line.strip()
        if not s:
            continue
        m = _GREP_LINE.match(s)
        if m:
            entries.append(_entry(m["path"], m["value"].strip(), None))
            continue
        c = _COMMAND.match(s)
        if c and ("/sys/" in c["cmd"] or c["cmd"].startswith("lspci")):
            command = c["cmd"]
            continue
        entries.append(_entry(None, s, command))
    return entries


def _entry(path: str | None, value: str, command: str | None) -> Record:
    source = path
    if source is None and command:
        paths = _PATH_IN_CMD.findall(command)
        source = paths[0] if len(paths) == 1 else None
    device = port = attr = None
    if source:
        source = source.replace("\\", "")  # `cat /sys/bus/pci/devices/0000\:3b\:00.0/...`
        attr = re.sub(r"^.*/(pkeys|gids)/[^/]+$", r"\1", source).rsplit("/", 1)[-1]
        for pattern in (_IB_PATH, _PCI_PATH, _NET_PATH):
            m = pattern.search(source)
            if m:
                device = m["dev"]
                port = m.groupdict().get("port")
                break
    elif command:
        m = _LSPCI_SLOT.search(command)
        device = m["dev"] if m else None
        attr = "lspci" if command.startswith("lspci") else None
    if device and "*" in device:
        device = None
    if port and "*" in port:
        port = None
    return {"path": source, "device": device, "port": port, "attr": attr, "value": value}


def _build(
    text: str, name: str, attrs: tuple[str, ...], convert: Callable[[Record], Any], expected: str
) -> tuple[list[Record], Record]:
    entries = _read(text)
    if not entries:
        fail(f"{name}: {expected}", text)
    for e in entries:
        if e["attr"] is not None and e["attr"] not in attrs:
            raise ParseError(
                f"{name}: reads {' or '.join(attrs)}, but this output comes from "
                f"{e['path'] or 'lspci'} (value {e['value'][:40]!r})"
            )
        e["value"] = convert(e)
        del e["attr"]
    values = [e["value"] for e in entries]
    distinct = sorted(set(values), key=str)
    by_device: dict[str, Any] = {}
    for e in entries:
        if e["device"] is None:
            continue
        if e.get("port") is not None:
            by_device.setdefault(e["device"], {})[e["port"]] = e["value"]
        else:
            by_device[e["device"]] = e["value"]
    record = {
        "entries": entries,
        "count": len(entries),
        "distinct": distinct,
        "value": distinct[0] if len(distinct) == 1 else None,
        "by_device": by_device,
    }
    return entries, record


def _checker(name: str, pattern: str, expected: str) -> Callable[[Record], re.Match]:
    regex = re.compile(pattern)

    def check(entry: Record) -> re.Match:
        m = regex.fullmatch(entry["value"])
        if not m:
            raise ParseError(f"{name}: expected {expected}, found {entry['value'][:60]!r}")
        return m

    return check


_LINK_LAYER = _checker("sysfs-link-layer", r"InfiniBand|Ethernet|Unknown", "InfiniBand, Ethernet or Unknown")
_STATE = _checker("sysfs-port-state", r"(\d+): ([A-Za-z_ ]+)", "'<num>: <STATE>' like '4: ACTIVE'")
_PKEY = _checker("sysfs-pkeys", r"0x[0-9a-fA-F]{1,4}", "a PKey like 0x8100")
_NUMA = _checker("sysfs-numa-node", r"(?:NUMA node:\s*)?(-?\d+)", "a NUMA node number like 0 or -1")


def parse_link_layer(text: str) -> Record:
    return _build(
        text,
        "sysfs-link-layer",
        ("link_layer",),
        lambda e: _LINK_LAYER(e).group(0),
        "InfiniBand / Ethernet from .../ports/N/link_layer",
    )[1]


def parse_port_state(text: str) -> Record:
    def name_and_code(e: Record) -> str:
        m = _STATE(e)
        e["code"] = int(m.group(1))
        return m.group(2).strip()

    return _build(
        text, "sysfs-port-state", ("state", "phys_state"), name_and_code, "'4: ACTIVE' from .../ports/N/state"
    )[1]


def parse_numa_node(text: str) -> Record:
    return _build(
        text,
        "sysfs-numa-node",
        ("numa_node", "lspci"),
        lambda e: int(_NUMA(e).group(1)),
        "a number from .../device/numa_node",
    )[1]


def parse_pkeys(text: str) -> Record:
    entries, record = _build(
        text,
        "sysfs-pkeys",
        ("pkeys",),
        lambda e: f"0x{int(_PKEY(e).group(0), 16):04x}",
        "0x8100-style values from .../ports/N/pkeys/I",
    )
    membership: dict[str, str] = {}
    pkeys: list[str] = []
    for e in entries:
        m = re.search(r"/pkeys/(\d+)$", e["path"] or "")
        e["index"] = int(m.group(1)) if m else None
        number = int(e["value"], 16)
        e["partition"] = "0x%04x" % (number & 0x7FFF)
        e["full"] = bool(number & 0x8000)
        if number & 0x7FFF == 0:
            continue  # unused table slot
        if e["value"] not in pkeys:
            pkeys.append(e["value"])
        if membership.get(e["partition"]) != "full":
            membership[e["partition"]] = "full" if e["full"] else "limited"
    record["pkeys"] = pkeys
    by_device: dict[str, dict[str, list[str]]] = {}
    for e in entries:
        if e["device"] is not None and int(e["value"], 16) & 0x7FFF:
            by_device.setdefault(e["device"], {}).setdefault(e["port"] or "?", []).append(e["value"])
    record["by_device"] = by_device
    record["membership"] = membership
    one_port = len({(e["device"], e["port"]) for e in entries}) == 1
    record["by_index"] = (
        {str(e["index"]): e["value"] for e in entries if e["index"] is not None} if one_port else None
    )
    return record


PARSERS = [
    Parser(
        name="sysfs-link-layer",
        reads="grep . /sys/class/infiniband/*/ports/*/link_layer",
        func=parse_link_layer,
        description="/sys/class/infiniband/*/ports/*/link_layer per device port",
    ),
    Parser(
        name="sysfs-port-state",
        reads="grep . /sys/class/infiniband/*/ports/*/state",
        func=parse_port_state,
        description="/sys/class/infiniband/*/ports/*/state per device port",
    ),
    Parser(
        name="sysfs-pkeys",
        reads="grep . /sys/class/infiniband/DEV/ports/N/pkeys/*",
        func=parse_pkeys,
        description="/sys/class/infiniband/DEV/ports/N/pkeys/* P_Key table entries",
    ),
    Parser(
        name="sysfs-numa-node",
        reads="grep . /sys/class/infiniband/*/device/numa_node",
        func=parse_numa_node,
        description="/sys/class/infiniband/*/device/numa_node per device",
    ),
]
