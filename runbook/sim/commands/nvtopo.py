"""`nvidia-smi topo -m` in the layout of recent drivers (space-aligned, GPU NUMA ID
column, NIC Legend), as in fixtures/real-outputs/nvidia-smi-topo-m/*driver5*."""

from __future__ import annotations

from ..cpus import format_cpulist
from ..hardware import NodeState

LEGEND = """
Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks
"""


def relation(a, b, same_card: bool = False) -> str:
    """PCIe path between two devices that each know (numa, switch, sub)."""
    if a is b:
        return "X"
    if same_card:
        return "PIX"
    if a.numa != b.numa:
        return "SYS"
    if a.switch and a.switch == b.switch:
        return "PIX" if a.sub == b.sub else "PXB"
    return "NODE"


def topo_matrix(node: NodeState) -> str:
    devs = [("GPU%d" % g.index, g) for g in node.gpus] + [("NIC%d" % i, n) for i, n in enumerate(node.nics)]
    names = [n for n, _ in devs]
    lines = [" " * 8 + "".join(f"{n:<8}" for n in names) + "CPU Affinity    NUMA Affinity   GPU NUMA ID"]
    for name, dev in devs:
        cells = []
        for _, other in devs:
            same_card = (
                name.startswith("NIC")
                and hasattr(other, "card")
                and other is not dev
                and other.card == dev.card
            )
            rel = relation(dev, other, same_card)
            cells.append(" X      " if rel == "X" else f"{rel:<8}")
        row = f"{name:<8}" + "".join(cells)
        if name.startswith("GPU"):
            cpus = format_cpulist(node.numa_cpus(dev.numa))
            row += cpus + " " * (8 - len(cpus) % 8) + f"{dev.numa:<16}" + "N/A"
        lines.append(row.rstrip())
    legend = "\nNIC Legend:\n\n" + "".join(f"  NIC{i}: {n.dev}\n" for i, n in enumerate(node.nics))
    return "\n".join(lines) + "\n" + LEGEND + legend
