"""The storage IPoIB interface (storage_ipoib_if): up, InfiniBand, with an
IPv4 address inside storage_subnet."""
from __future__ import annotations

import ipaddress
from typing import Any

from ..design import Comparator


def ipoib_storage(record: Any, v: dict) -> list[str]:
    name = str(v["storage_ipoib_if"])
    subnet = ipaddress.ip_network(str(v["storage_subnet"]), strict=False)
    iface = record["interfaces"].get(name)
    if iface is None:
        return [f"{name}: no such interface"]
    out = []
    if not iface["up"] or not iface["lower_up"] or iface["state"] not in ("UP", "UNKNOWN"):
        out.append(f"{name}: expected UP with carrier, found state {iface['state']} "
                   f"<{','.join(iface['flags'])}>")
    if iface["link_type"] != "infiniband":
        out.append(f"{name}: expected link/infiniband, found link/{iface['link_type']}")
    inside = [a for a in iface["inet"] if ipaddress.ip_interface(a).ip in subnet]
    if not inside:
        found = ", ".join(iface["inet"]) or "no IPv4 address"
        out.append(f"{name}: expected an address in {subnet}, found {found}")
    return out


COMPARATORS = [Comparator("ipoib-storage", "host", ipoib_storage,
                          "storage_ipoib_if up on InfiniBand with an address in storage_subnet")]
