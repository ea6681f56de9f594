"""`ethtool -i IFACE`: driver, driver version, firmware, PCI address of a netdev.

Record: driver, version, firmware_version, expansion_rom_version, bus_info,
supports_statistics/test/eeprom_access/register_dump/priv_flags (booleans),
plus firmware (the version alone) and psid ("MT_2420110034") split out of
"14.30.1004 (MT_2420110034)". Field names are ethtool's with '-' -> '_'.
"""

from __future__ import annotations

import re

from ._hosttext import fail, lines_of
from .base import Parser, Record

_FIELD = re.compile(r"^(?P<key>[a-z][a-z0-9-]*):\s?(?P<value>.*)$")
_REQUIRED = ("driver", "bus_info")


def parse_ethtool_i(text: str) -> Record:
    record: Record = {}
    for line in lines_of(text):
        if not line.strip():
            continue
        m = _FIELD.match(line)
        if not m:
            fail("`ethtool -i` lines like 'driver: mlx5_core'", line)
        key, value = m["key"].replace("-", "_"), m["value"].strip()
        record[key] = {"yes": True, "no": False}.get(value, value) if key.startswith("supports_") else value
    missing = [k for k in _REQUIRED if k not in record]
    if missing:
        fail(f"`ethtool -i` output (no {', '.join(k.replace('_', '-') + ':' for k in missing)} line)", text)
    fw = re.fullmatch(r"(?P<fw>\S+)(?:\s+\((?P<psid>[^)]*)\))?", record.get("firmware_version", ""))
    record["firmware"] = fw["fw"] if fw else None
    record["psid"] = fw["psid"] if fw else None
    return record


PARSERS = [
    Parser(
        name="ethtool-i",
        reads="ethtool -i IFACE",
        func=parse_ethtool_i,
        description="a netdev's driver, driver version, firmware version and PCI bus address",
    )
]
