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


def long_job(cluster, node, seconds):
    """An mpirun launched from this node runs `seconds` (default 30) before it
    prints its result, as a real multi-node NCCL job takes minutes: long enough
    for a test to stop, time out or kill the tool in the middle of it."""
    from .faults import FaultError

    try:
        value = float(seconds)
    except ValueError:
        value = -1.0
    if not 0 < value <= 3600:
        raise FaultError(f"long_job takes a number of seconds (0 < s <= 3600), not {seconds!r}")
    node.job_seconds = value


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


def switch_sm_standby_missing(cluster, switch: str, _):
    """On a switch-SM fabric: the designed standby switch's SM is off (`no ib sm`
    on its CLI, or a reset that lost the setting). Its port 0 then reports
    IsSMdisabled instead of IsSM, so only the master answers `saquery -s`."""
    from .faults import FaultError

    standby = str(cluster.design.var("sm_standby", ""))
    sms = cluster.fabric.switch_sms
    if switch != standby or switch not in sms:
        raise FaultError(
            f"sm_standby_missing on a switch applies to the designed standby switch "
            f"({standby if standby in sms else 'none: the SMs do not run on switches'}), not {switch}"
        )
    sms[switch].enabled = False


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


# ---- port error counters (PMA PortCounters), as perfquery / ibqueryerrors /
# ibdiagnet read them. Every counter is 0 on a healthy port; a marginal cable
# counts on both ends of its link (the HCA port and the switch port it reaches).
ERROR_COUNTERS = (
    "SymbolErrorCounter",
    "LinkErrorRecoveryCounter",
    "LinkDownedCounter",
    "PortRcvErrors",
    "PortRcvRemotePhysicalErrors",
    "PortRcvSwitchRelayErrors",
    "PortXmitDiscards",
    "PortXmitConstraintErrors",
    "PortRcvConstraintErrors",
    "LocalLinkIntegrityErrors",
    "ExcessiveBufferOverrunErrors",
    "VL15Dropped",
)


def port_errors(marginal: bool) -> dict[str, int]:
    """The error counters of one end of a link."""
    counters = dict.fromkeys(ERROR_COUNTERS, 0)
    if marginal:
        counters["SymbolErrorCounter"] = BER_SYMBOL_ERRORS
        counters["LinkErrorRecoveryCounter"] = BER_RECOVERIES
    return counters


def fabric_ports(cluster):
    """Every port with a link in the fabric, once per end:
    (kind "ca"|"switch", node name, nic or None, switch or None, port number,
    marginal, peer) where peer is ("ca", node, nic) | ("switch", switch, port)."""
    fab = cluster.fabric
    for node in cluster.nodes.values():
        for nic in node.nics:
            if not fab.ib_link(node, nic) or nic.cable[0] not in fab.switches:
                continue
            sw = fab.switches[nic.cable[0]]
            yield "ca", node.name, nic, None, 1, nic.marginal, ("switch", sw, int(nic.cable[1]))
    for sw in fab.switches.values():
        for port, peer in sorted(sw.peers.items()):
            if peer[0] == "switch":
                yield "switch", sw.name, None, sw, port, False, ("switch", fab.switches[peer[1]], peer[2])
                continue
            node = cluster.nodes[peer[1]]
            nic = node.nic(peer[2])
            if nic is None or not fab.ib_link(node, nic):
                continue
            yield "switch", sw.name, None, sw, port, nic.marginal, ("ca", node, nic)


def no_ibdiagnet(cluster, node, _):
    pass  # the name in node.faults is the state: commands/ibdiagnet.py is not installed there
