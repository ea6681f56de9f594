"""How fast NCCL and perftest run on a node, given its state.

The healthy numbers sit a few percent above the design baselines. A GPU link
trained at x8 or at Gen3 halves bus bandwidth. Inside one node NCCL moves data
GPU to GPU over PCIe and never touches a NIC, so a NIC in the other socket's
slot does not slow single-node all_reduce; across nodes it costs 25 % (every
rank of that rail crosses the CPU interconnect to reach it), as do missing
GPUDirect RDMA (nvidia_peermem), a 100G port, a port out of the fabric or a
cable in the wrong rail.

ib_write_bw moves host memory through the NIC: a process bound (numactl) to
another NUMA node than the NIC's keeps its buffers there, so every transfer
crosses the CPU interconnect (UPI/xGMI) and the run is slower (NVIDIA's
performance tuning notes: run benchmarks from the CPU the NIC's PCIe link is
attached to). The binding of the running command is NUMA_BINDING (set by
`numactl --cpunodebind/--membind`, commands/numabind.py); an unbound run is
taken as placed near the NIC (the simulator's scheduler is kind; a real one
is not always, which is why the ib-write-bw step binds).
"""

from __future__ import annotations

from contextvars import ContextVar

from .fabric import Fabric
from .hardware import NodeState

SPEED_GTS = {"2.5GT/s": 2.5, "5GT/s": 5.0, "8GT/s": 8.0, "16GT/s": 16.0, "32GT/s": 32.0}
HEADROOM = 1.04
# ib_write_bw with its buffers on the far socket: ~82 % of the local figure
# (an HDR port's ~196 Gb/s falls to ~160, below the design's 190)
CROSS_SOCKET = 0.82
# the NUMA nodes the running command is bound to (cpunodebind and membind), None unbound
NUMA_BINDING: ContextVar[frozenset[int] | None] = ContextVar("numa_binding", default=None)


def _link_ratio(link) -> float:
    speed = SPEED_GTS.get(link.speed, 16.0) / SPEED_GTS.get(link.cap_speed, 16.0)
    return min(1.0, speed) * min(1.0, link.width / link.cap_width)


link_ratio = _link_ratio  # public name for the other benchmarks (nvbandwidth)


def intra_factor(node: NodeState) -> float:
    return min((_link_ratio(g.link) for g in node.gpus), default=1.0)


def inter_factor(fabric: Fabric, node: NodeState) -> float:
    factor = intra_factor(node)
    if any(n.role == "compute" and n.numa != n.design_numa for n in node.nics):
        factor *= 0.75
    compute = [n for n in node.nics if n.role == "compute"]
    for nic in compute:
        st = fabric.status(node, nic)
        share = 1.0 / max(1, len(compute))
        if st.state != "Active" or st.layer != "InfiniBand":
            factor -= share
            continue
        if nic.rate < 200:
            factor -= share * (1 - nic.rate / 200)
        pcie = _nic_pcie_ratio(nic.link)
        if pcie < 1.0:
            factor -= share * (1 - pcie)
    if "nvidia_peermem" not in node.modules:
        factor *= 0.6
    if any(n.role == "compute" and n.cable and fabric.rail_leaf.get(n.rail) != n.cable[0] for n in compute):
        factor *= 0.85
    return max(0.05, factor)


def port_gbits(node: NodeState, nic) -> float:
    """ib_write_bw average for one port: line rate or what the PCIe link can carry."""
    line = nic.rate * 0.982
    pcie = 252.0 * _nic_pcie_ratio(nic.link) * 0.9
    return min(line, pcie)


def _nic_pcie_ratio(link) -> float:
    """Share of a 200G port the NIC's PCIe link carries: Gen4 x16 (~252 Gb/s) is
    enough; a ConnectX-7 (Gen5) in a Gen4 slot runs at 16GT/s and loses nothing."""
    return min(1.0, SPEED_GTS.get(link.speed, 16.0) * link.width / (16.0 * 16))


def numa_factor(nic) -> float:
    """1.0 when the running command is unbound or bound to the NIC's own NUMA
    node; CROSS_SOCKET when its CPUs or memory are bound to another node."""
    bound = NUMA_BINDING.get()
    return 1.0 if not bound or bound == {nic.numa} else CROSS_SOCKET
