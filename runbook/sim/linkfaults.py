"""Faults of links and of a node's speed, for the fabric acceptance steps:
`cable_ber` (a marginal cable: symbol errors on both ends, and the link's
RDMA bandwidth drops as packets are retransmitted) and `slow_node` (a node
that slows every NCCL job it is part of, with no error anywhere: throttled
GPUs or a power-capped BIOS profile). The state is the NIC's `marginal` flag
and the fault's name in node.faults, so it persists with the node."""

from __future__ import annotations

BER_BANDWIDTH = 0.55  # share of line rate left on a link retransmitting (marginal cable)
BER_SYMBOL_ERRORS = 4873  # symbol errors counted on each end since the counters were cleared
BER_RECOVERIES = 3
SLOW_NODE_NCCL = 0.6  # NCCL bus bandwidth share of a job that includes the slow node


def cable_ber(cluster, node, dev):
    from .faults import FaultError

    nic = node.nic(dev)
    if nic is None or not nic.cable:
        raise FaultError(f"{node.name} has no cabled device {dev!r}")
    nic.marginal = True


def slow_node(cluster, node, _):
    pass  # the name in node.faults is the state (nccl_factor below)


def ber_devs(node) -> set[str]:
    return {n.dev for n in node.nics if n.marginal}


def link_factor(node, nic) -> float:
    return BER_BANDWIDTH if nic.dev in ber_devs(node) else 1.0


def nccl_factor(node) -> float:
    """A node's extra NCCL factor: slow_node, and a marginal rail link's share
    (one rail of four at BER_BANDWIDTH, as perfmodel.inter_factor counts a slow port)."""
    factor = SLOW_NODE_NCCL if "slow_node" in node.faults else 1.0
    compute = [n for n in node.nics if n.role == "compute"]
    for nic in compute:
        if nic.dev in ber_devs(node):
            factor -= (1 - BER_BANDWIDTH) / max(1, len(compute))
    return factor


def sm_standby_missing(cluster, node, _):
    """The designed standby's OpenSM has died (still enabled: it starts again at boot)."""
    from .faults import FaultError

    standby = str(cluster.design.var("sm_standby", ""))
    if node.name != standby:
        raise FaultError(
            f"sm_standby_missing applies to the designed standby ({standby or 'none designed'}), "
            f"not {node.name}"
        )
    node.opensm.running = False


def spine_link_down(cluster, node, arg):
    """The link between a leaf and a spine has no light ("leaf02:spine03"; by
    default the first rail leaf and the last spine). The SM routes around it: a
    single flow still gets through, the fabric has less bandwidth. It is a fault
    of the fabric, put on an SM node of the scenario; it lasts while the lab
    runs (a restarted lab rebuilds the fabric from the scenario)."""
    from .faults import FaultError

    fab = cluster.fabric
    leaf, _, spine = (arg or "").partition(":")
    leaf = leaf or next(iter(fab.rail_leaf.values()))
    spine = spine or fab.spines[-1]
    if leaf not in fab.switches or spine not in fab.spines:
        raise FaultError(f"spine_link_down needs LEAF:SPINE of this fabric, not {arg!r}")
    fab.down_uplinks.add((leaf, spine))
    fab.rebuild_ports()
