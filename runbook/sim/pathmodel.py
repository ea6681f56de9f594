"""RDMA bandwidth between two nodes: limited by both ends (port rate, PCIe
slot: perfmodel.port_gbits) and by the path: a marginal cable at either end
(linkfaults), and, across rails, the spine uplinks of both leaves (one QP is
one flow: it takes one uplink, so an uplink down only moves it; it costs
bandwidth only when every uplink of a leaf is down).

Flows between leaves share the uplinks: `LeafFlows` (leafflows.py) counts the
ones running (ib_write_bw, client -> server), and when what they ask of a leaf's uplinks,
up out of the client's leaf or down into the server's, is more than those
uplinks carry (Active uplinks x `leaf_uplinks.rate_gbps`), a new flow gets its
share. That is the even share of adaptive routing; a fabric routed statically
(OpenSM's default) can do worse, never better, so a schedule the simulator
finds slow is slow on the real fabric too (engine/kinds/leaves.py)."""

from __future__ import annotations

from . import linkfaults, perfmodel

DEFAULT_UPLINK_GBPS = 400.0  # NDR, the seed's leaf-spine links (inventory leaf_uplinks.rate_gbps)


def pair_gbits(fabric, a, nic_a, b, nic_b) -> float:
    value = min(perfmodel.port_gbits(a, nic_a), perfmodel.port_gbits(b, nic_b))
    value *= linkfaults.link_factor(a, nic_a) * linkfaults.link_factor(b, nic_b)
    leaf_a, leaf_b = leaf_of(nic_a), leaf_of(nic_b)
    if leaf_a != leaf_b and not (_uplinks(fabric, leaf_a) and _uplinks(fabric, leaf_b)):
        return 0.0
    return value


def _uplinks(fabric, leaf: str) -> int:
    sw = fabric.switches.get(leaf)
    if sw is None:
        return 0
    return sum(1 for p in sw.peers.values() if p[0] == "switch")


def flow_starts(fabric, nic_a, nic_b, gbits: float) -> float:
    """A flow of `gbits` from nic_a's leaf to nic_b's starts: the Gb/s it gets."""
    rate = _uplink_gbps(fabric)
    return fabric.flows.start(
        leaf_of(nic_a), leaf_of(nic_b), gbits, lambda leaf: _uplinks(fabric, leaf) * rate
    )


def flow_ends(fabric, nic_a, nic_b, gbits: float) -> None:
    fabric.flows.end(leaf_of(nic_a), leaf_of(nic_b), gbits)


def leaf_of(nic) -> str:
    return nic.cable[0] if nic.cable else ""


def _uplink_gbps(fabric) -> float:
    spec = fabric.design.var("leaf_uplinks") or {}
    try:
        return float(spec.get("rate_gbps", DEFAULT_UPLINK_GBPS))
    except (TypeError, ValueError):
        return DEFAULT_UPLINK_GBPS
