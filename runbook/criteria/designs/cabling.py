"""Rail cabling from `iblinkinfo` run on a compute node: every switch port whose
peer is "<this host> <device>" (the node description MLNX_OFED sets) must be on
the leaf of that device's rail (rail_leaves). Switch names are matched on the
hostname inside NVIDIA's default node description ("MF0;leaf01:MQM9700/U1")
or on the whole description."""
from __future__ import annotations

import re
from typing import Any

from ..design import Comparator
from ._util import by_key

_SWITCH_HOST = re.compile(r"^[^;]*;([^:]+):")


def _switch_name(desc: str) -> str:
    m = _SWITCH_HOST.match(desc or "")
    return m.group(1) if m else (desc or "").strip()


def _peer(name: str | None) -> tuple[str, str] | None:
    words = (name or "").split()
    if len(words) < 2:
        return None
    return words[0].split(".")[0], words[-1]


def rail_cabling(record: Any, v: dict) -> list[str]:
    host = str(v.get("inventory_hostname_short") or v["inventory_hostname"]).split(".")[0]
    links = [l for l in record["links"] if l["node_type"] == "Switch" or l["switch"]]
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
            out.append(f"{host} {dev} (rail {rail}): not seen on any switch port "
                       f"(expected on {expected}; link down or not cabled)")
            continue
        for leaf, port in where:
            if leaf != expected:
                out.append(f"{host} {dev} (rail {rail}): expected on {expected}, found on {leaf} port {port}")
    return out


COMPARATORS = [Comparator("rail-cabling", "host", rail_cabling,
                          "each compute NIC cabled to its rail's leaf (rail_leaves)")]
