"""Rail cabling from `iblinkinfo` run on a compute node: every switch port whose
peer is "<this host> <device>" (the node description MLNX_OFED sets) must be on
the leaf of that device's rail (rail_leaves). Switch names are matched on the
hostname inside NVIDIA's default node description ("MF0;leaf01:MQM9700/U1")
or on the whole description.

With the `rail-links-by-pci` parser (ibdev2netdev -v; ibstat; the iblinkinfo
lines of this node's own GUIDs) a port is found on the switches by its port
GUID from the node's own ibstat, never by node description (which may be the
FQDN, or the firmware default "MT4129 ConnectX7 ..." when rdma-ndd does not
run), and each designed NIC by its PCI address.

With one `iblinkinfo` sweep of the whole fabric judged for every host (the
step's `run_on: one`), a host's ports are found by the port GUIDs the design
records for it: `ib_port_guids` ({PCI address: port GUID}, from each node's
`ibstat` at rack-and-stack, the same GUIDs the PKey plan lists). The node
description is never used to find them."""

from __future__ import annotations

import re
from typing import Any

from ..design import Comparator
from ._util import by_key, designed_nics, missing_card

_SWITCH_HOST = re.compile(r"^[^;]*;([^:]+):")


def _switch_name(desc: str) -> str:
    m = _SWITCH_HOST.match(desc or "")
    return m.group(1) if m else (desc or "").strip()


def _peer(name: str | None) -> tuple[str, str] | None:
    words = (name or "").split()
    if len(words) < 2:
        return None
    return words[0].split(".")[0], words[-1]


def _guids(ca: dict) -> set[str]:
    """Node and port GUIDs of a CA (iblinkinfo's CA lines show the node GUID;
    on a ConnectX-4 or later function both are the same)."""
    found = {ca.get("node_guid")} | {p.get("port_guid") for p in (ca.get("ports") or {}).values()}
    return {str(g).lower() for g in found if g}


def rail_cabling_by_guid(record: Any, v: dict) -> list[str]:
    out = []
    for nic, _, dev, label in designed_nics(record, v, ("compute",)):
        rail = nic["rail"]
        expected = str(by_key(v["rail_leaves"], rail))
        label = label if nic.get("pci") else f"{label} (rail {rail})"  # a slot label names the rail already
        if dev is None:
            out.append(missing_card(label, nic))
            continue
        ca = record["by_name"].get(dev)
        if ca is None:
            out.append(f"{label}: not in this node's ibstat output")
            continue
        guids = _guids(ca)
        where = [link for link in record["ca_links"] if link["guid"] in guids]
        if not where:
            out.append(
                f"{label}: port GUID {', '.join(sorted(guids))} not seen on any switch "
                f"(expected on {expected}; link down or not cabled)"
            )
            continue
        for link in where:
            leaf = _switch_name(link["remote"])
            if leaf != expected:
                out.append(f"{label}: expected on {expected}, found on {leaf} port {link['remote_port']}")
    return out


# The sweep is one record judged for every host: its links are indexed once, not
# scanned whole for each host (that was quadratic in the fleet's size). The last
# two records indexed are kept (held, so their ids are not reused meanwhile).
_indexed: list[tuple[Any, dict[str, list[dict]]]] = []


def _ca_links_by_guid(record: Any) -> dict[str, list[dict]]:
    """The sweep's links of channel adapters that have a peer, by port GUID and by
    node GUID, each list in the sweep's order."""
    for rec, index in _indexed:
        if rec is record:
            return index
    index: dict[str, list[dict]] = {}
    for link in record["links"]:
        if link["node_type"] == "Switch" or link["switch"] or link.get("peer_name") is None:
            continue
        port, node = link.get("port_guid"), link.get("node_guid")
        index.setdefault(port, []).append(link)
        if node != port:
            index.setdefault(node, []).append(link)
    _indexed[:] = [(record, index), *_indexed[:1]]
    return index


def rail_cabling_from_sweep(record: Any, v: dict) -> list[str]:
    """A fabric-wide iblinkinfo record, this host's ports found by the design's GUIDs."""
    from ...parsers._ib_common import guid
    from ...parsers.nic_by_pci import pci_address

    designed = {pci_address(k): guid(str(g)) for k, g in (v.get("ib_port_guids") or {}).items()}
    if not designed:
        raise ValueError(
            "the design gives no port GUIDs for this host (ib_port_guids: PCI address -> port GUID, "
            "from its ibstat at rack-and-stack)"
        )
    by_guid = _ca_links_by_guid(record)
    out = []
    for nic, _, _dev, label in designed_nics(record, v, ("compute",)):
        rail = nic["rail"]
        expected = str(by_key(v["rail_leaves"], rail))
        g = designed.get(pci_address(nic["pci"])) if nic.get("pci") else None
        if g is None:
            out.append(f"{label}: no port GUID in the design (ib_port_guids) for this NIC")
            continue
        where = by_guid.get(g, [])
        if not where:
            out.append(
                f"{label}: port GUID {g} not seen on any switch (expected on {expected}; "
                "link down, not cabled, or the card was replaced and ib_port_guids not updated)"
            )
            continue
        for link in where:
            leaf = _switch_name(link["peer_name"])
            if leaf != expected:
                out.append(f"{label}: expected on {expected}, found on {leaf} port {link['peer_port']}")
    return out


def rail_cabling(record: Any, v: dict) -> list[str]:
    if "ca_links" in record:
        return rail_cabling_by_guid(record, v)
    if v.get("ib_port_guids"):
        return rail_cabling_from_sweep(record, v)
    host = str(v.get("inventory_hostname_short") or v["inventory_hostname"]).split(".")[0]
    links = [link for link in record["links"] if link["node_type"] == "Switch" or link["switch"]]
    if not links:
        raise ValueError("iblinkinfo shows no switch ports (partial output?)")
    seen: dict[str, list[tuple[str, int]]] = {}
    for link in links:
        peer = _peer(link.get("peer_name"))
        if peer and peer[0] == host:
            seen.setdefault(peer[1], []).append((_switch_name(link["node"]), link["port"]))
    out = []
    for nic in v["compute_nics"]:
        dev, rail = nic["dev"], nic["rail"]
        expected = str(by_key(v["rail_leaves"], rail))
        where = seen.get(dev)
        if not where:
            out.append(
                f"{host} {dev} (rail {rail}): not seen on any switch port "
                f"(expected on {expected}; link down or not cabled)"
            )
            continue
        for leaf, port in where:
            if leaf != expected:
                out.append(f"{host} {dev} (rail {rail}): expected on {expected}, found on {leaf} port {port}")
    return out


COMPARATORS = [
    Comparator(
        "rail-cabling", "host", rail_cabling, "each compute NIC cabled to its rail's leaf (rail_leaves)"
    )
]
