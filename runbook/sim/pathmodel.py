"""RDMA bandwidth between two nodes: limited by both ends (port rate, PCIe
slot: perfmodel.port_gbits) and by the path: a marginal cable at either end
(linkfaults), and, across rails, the spine uplinks of both leaves (one QP is
one flow: it takes one uplink, so an uplink down only moves it; it costs
bandwidth only when every uplink of a leaf is down)."""

from __future__ import annotations

from . import linkfaults, perfmodel


def pair_gbits(fabric, a, nic_a, b, nic_b) -> float:
    value = min(perfmodel.port_gbits(a, nic_a), perfmodel.port_gbits(b, nic_b))
    value *= linkfaults.link_factor(a, nic_a) * linkfaults.link_factor(b, nic_b)
    leaf_a = nic_a.cable[0] if nic_a.cable else ""
    leaf_b = nic_b.cable[0] if nic_b.cable else ""
    if leaf_a != leaf_b and not (_uplinks(fabric, leaf_a) and _uplinks(fabric, leaf_b)):
        return 0.0
    return value


def _uplinks(fabric, leaf: str) -> int:
    sw = fabric.switches.get(leaf)
    if sw is None:
        return 0
    return sum(1 for p in sw.peers.values() if p[0] == "switch")
