"""The storage IPoIB interface (storage_ipoib_if): up, InfiniBand, with an
IPv4 address inside storage_subnet. When the design runs it on a child
interface of the storage PKey (storage_ipoib_parent / _pkey / _mode / _mtu),
`ip -d addr` must show that child with that P_Key, mode and MTU: on the parent
(P_Key 0xffff, the default partition, MTU 2044) storage traffic would share the
partition every port is in."""

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
        out.append(
            f"{name}: expected UP with carrier, found state {iface['state']} <{','.join(iface['flags'])}>"
        )
    if iface["link_type"] != "infiniband":
        out.append(f"{name}: expected link/infiniband, found link/{iface['link_type']}")
    parent = v.get("storage_ipoib_parent")
    if parent and iface.get("parent") not in (None, str(parent)):
        out.append(f"{name}: a child of {iface['parent']}, expected of {parent}")
    ipoib = iface.get("ipoib")
    want_pkey, want_mode = v.get("storage_ipoib_pkey"), v.get("storage_ipoib_mode")
    if (want_pkey or want_mode) and ipoib is None:
        out.append(
            f"{name}: no IPoIB details in the output (`ip -d addr show dev {name}` prints the P_Key and mode)"
        )
    elif ipoib is not None:
        if want_pkey and int(ipoib["pkey"], 16) != int(str(want_pkey), 16):
            note = (
                " (the default partition: storage IPoIB is not isolated)" if ipoib["pkey"] == "0xffff" else ""
            )
            out.append(f"{name}: P_Key {ipoib['pkey']}, expected {want_pkey}{note}")
        if want_mode and ipoib["mode"] != str(want_mode):
            out.append(f"{name}: IPoIB mode {ipoib['mode']}, expected {want_mode}")
    want_mtu = v.get("storage_ipoib_mtu")
    if want_mtu and iface.get("mtu") != int(want_mtu):
        hint = (
            " (the partition's IPoIB group is 2048: mtu=5 missing in partitions.conf)"
            if iface.get("mtu") == 2044
            else ""
        )
        out.append(f"{name}: MTU {iface.get('mtu')}, expected {want_mtu}{hint}")
    inside = [a for a in iface["inet"] if ipaddress.ip_interface(a).ip in subnet]
    if not inside:
        found = ", ".join(iface["inet"]) or "no IPv4 address"
        out.append(f"{name}: expected an address in {subnet}, found {found}")
    return out


COMPARATORS = [
    Comparator(
        "ipoib-storage",
        "host",
        ipoib_storage,
        "storage_ipoib_if up on InfiniBand with an address in storage_subnet",
    )
]
