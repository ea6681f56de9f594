"""The fault menu: what each named fault does to a node (the names are part of
the scenario format). A fault may take one argument (`{pcie_x8: gpu3}`,
`{link_type_eth: mlx5_2}`); without one it hits the target listed here.
Behaviour faults (unreachable, hang, slow, host_key_changed) change how the
node's SSH server answers, not its hardware; the server reads node.faults."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .cluster import Cluster
from .cpus import format_cpulist
from .etcfiles import EXTERNAL_REPO, managed_paths
from .hardware import ETH, NodeState
from .linkfaults import (
    cable_ber,
    long_job,
    no_ibdiagnet,
    slow_node,
    sm_standby_missing,
    spine_link_down,
    switch_sm_standby_missing,
)

DRIFT_OFED = ("MLNX_OFED_LINUX-23.07-0.5.1.2", "23.07-0.5.1")
DRIFT_DRIVER = "550.54.15"
BEHAVIOURS = {"unreachable", "hang", "slow", "host_key_changed"}


class FaultError(ValueError):
    """The fault cannot apply to this node or argument (message for FILE:LINE)."""


@dataclass(frozen=True)
class Fault:
    name: str
    kinds: tuple[str, ...]  # node kinds it applies to
    default: str  # default target ("" = none)
    apply: Callable[[Cluster, NodeState, str], None]
    what: str


def _nic(node: NodeState, dev: str):
    nic = node.nic(dev)
    if nic is None:
        raise FaultError(f"{node.name} has no device {dev!r} (it has {', '.join(n.dev for n in node.nics)})")
    return nic


def _default_dev(node: NodeState, dev: str) -> str:
    return dev if node.kind == "compute" else node.nics[0].dev


def link_type_eth(cluster, node, dev):
    nic = _nic(node, _default_dev(node, dev))
    card = node.card_of(nic)
    card.link_type[nic.port_on_card - 1] = ETH
    card.link_type_next[nic.port_on_card - 1] = ETH


def fw_reset_needed(cluster, node, dev):
    """A port left in ETH on a card whose firmware a warm reboot does not reset:
    after mlxconfig set + reboot, Next Boot is IB(1) and Current still ETH(2)."""
    link_type_eth(cluster, node, dev)
    card = node.card_of(_nic(node, _default_dev(node, dev)))
    card.warm_reboot_resets = False


def wrong_rail(cluster, node, dev):
    a = _nic(node, dev)
    others = [n for n in node.nics if n.role == "compute" and n is not a]
    if a.role != "compute" or not others:
        raise FaultError(f"wrong_rail needs a compute NIC with a neighbour rail, not {dev}")
    b = next((n for n in others if n.rail == a.rail % 4 + 1), others[0])
    a.cable, b.cable = b.cable, a.cable
    cluster.fabric.rebuild_ports()


def nic_numa_mismatch(cluster, node, dev):
    nic = _nic(node, dev)
    nic.numa = (nic.design_numa + 1) % node.sockets
    nic.switch, nic.sub = "", ""  # now in a root-port slot of the other socket


def _pci_target(node, target):
    if target.startswith("gpu") and target[3:].isdigit():
        idx = int(target[3:])
        if idx >= len(node.gpus):
            raise FaultError(f"{node.name} has no GPU {idx}")
        return node.gpus[idx].link
    return _nic(node, target).link


def pcie_x8(cluster, node, target):
    _pci_target(node, target).width = 8


def pcie_gen3(cluster, node, target):
    _pci_target(node, target).speed = "8GT/s"


def missing_dimm(cluster, node, target):
    slot = next((d for d in node.dimms if d.locator == target), None) if target else node.dimms[-1]
    if slot is None:
        raise FaultError(f"{node.name} has no DIMM slot {target!r}")
    slot.present = False


def ofed_version_drift(cluster, node, _):
    node.versions["ofed"], node.versions["ofed_kernel"] = DRIFT_OFED


def ofed_kernel_mismatch(cluster, node, _):
    node.versions["ofed_kernel"] = DRIFT_OFED[1]


def ofed_kmod_stale(cluster, node, _):
    """OFED updated on disk, the old mlx5_core still loaded (no reboot since)."""
    node.versions["ofed_kernel_loaded"] = DRIFT_OFED[1]


def driver_version_drift(cluster, node, _):
    node.versions["driver"] = DRIFT_DRIVER


def etc_drift(cluster, node, path):
    path = path or managed_paths(cluster.design)[-1]
    if path not in node.files:
        raise FaultError(f"{path} is not a managed file of {node.name}")
    node.files[path] += "# hand edit during troubleshooting -- revert me\nvm.swappiness = 10\n"


def external_repo(cluster, node, _):
    node.files["/etc/yum.repos.d/cuda-rhel9.repo"] = EXTERNAL_REPO


def clock_skew(cluster, node, seconds):
    node.clock_offset_s = float(seconds or 2.35)


def ib_port_down(cluster, node, dev):
    _nic(node, _default_dev(node, dev)).phys_up = False


def ib_rate_100(cluster, node, dev):
    _nic(node, _default_dev(node, dev)).rate = 100


def pkey_missing(cluster, node, pkey):
    pkey = pkey or str(cluster.design.var("pkey_storage", "0x200"))
    text = node.files.get("/etc/opensm/partitions.conf", "")
    entries = text.split(";")
    kept = [e for e in entries if not _defines(e, pkey)]
    if len(kept) == len(entries):
        raise FaultError(f"partitions.conf of {node.name} has no partition {pkey}")
    node.files["/etc/opensm/partitions.conf"] = ";".join(kept)


def _defines(entry: str, pkey: str) -> bool:
    head = entry.split(":", 1)[0].split("\n")[-1]
    value = head.split("=", 1)[1].split(",")[0].strip() if "=" in head else ""
    try:
        return int(value, 0) == int(pkey, 0)
    except ValueError:
        return False


def opensm_down(cluster, node, _):
    node.opensm.running = False
    node.opensm.enabled = False


def irq_affinity_wrong(cluster, node, dev):
    nic = _nic(node, _default_dev(node, dev))
    other = node.numa_cpus((nic.numa + 1) % node.sockets)
    for irq in node.irqs:
        if irq.dev == nic.dev:
            if irq.name.startswith("mlx5_comp"):
                k = int(irq.name[len("mlx5_comp") :].split("@")[0])
                irq.cpus = str(other[k % len(other)])
            else:
                irq.cpus = format_cpulist(other)


def irqbalance_unbanned(cluster, node, _):
    """irqbalance running with the stock /etc/sysconfig/irqbalance: nothing
    banned, so it spreads the NIC interrupts over both sockets."""
    from .etcfiles import IRQBALANCE_STOCK

    node.files["/etc/sysconfig/irqbalance"] = IRQBALANCE_STOCK
    node.irqbalance.enabled = node.irqbalance.running = True


def irq_pinning_not_persisted(cluster, node, _):
    """Pinned now, but no boot-time unit: the next boot forgets it."""
    unit = str(cluster.design.var("irq_affinity_unit", "") or "")
    if unit in node.units_enabled:
        node.units_enabled.remove(unit)


def peermem_missing(cluster, node, _):
    if "nvidia_peermem" in node.modules:
        node.modules.remove("nvidia_peermem")
    node.files.pop("/etc/modules-load.d/nvidia-peermem.conf", None)


def nic_dead(cluster, node, dev):
    """A card gone from the PCI bus: its functions vanish (lspci, sysfs, every
    IB tool) and mlx5_N, assigned in probe order, shifts down for every
    function probed after it - the neighbour now answers to the dead card's
    name. LIDs follow the port GUIDs (OpenSM's guid2lid), not the names."""
    dead = _nic(node, dev)
    gone = [n for n in node.nics if n.card == dead.card]
    kept = [n for n in node.nics if n.card != dead.card]
    old_names = [n.dev for n in node.nics]
    lids = {n.guid: cluster.fabric.lid_of.pop((node.name, n.dev), 0) for n in node.nics}
    renamed = {n.dev: old_names[i] for i, n in enumerate(kept)}
    for n in gone:
        n.cable = []
    node.irqs = [irq for irq in node.irqs if irq.dev not in {n.dev for n in gone}]
    for irq in node.irqs:
        irq.dev = renamed.get(irq.dev, irq.dev)
    for n in kept:
        n.dev = renamed[n.dev]
        cluster.fabric.lid_of[(node.name, n.dev)] = lids[n.guid]
    node.nics = kept
    cluster.fabric.rebuild_ports()


def hca_fw_drift(cluster, node, dev):
    """One card flashed with another firmware than the fleet's (a replacement
    card from stock, or an update that stopped half way): the one running
    firmware (node.firmware) that ibstat, sysfs, mlxfwmanager and flint show.
    The target is a device (mlx5_4) or a card index (0)."""
    if str(dev).isdigit():
        nic = next((n for n in node.nics if n.card == int(dev)), None)
        if nic is None:
            raise FaultError(f"{node.name} has no card {dev}")
    else:
        nic = _nic(node, _default_dev(node, dev))
    old = node.firmware(nic).split(".")
    node.firmware_of[nic.card] = ".".join([old[0], f"{int(old[1]) - 1:02d}"] + old[2:])


def _behaviour(cluster, node, _):
    pass


ALL = ("compute", "sm")
MENU: dict[str, Fault] = {
    f.name: f
    for f in [
        Fault(
            "link_type_eth",
            ALL,
            "mlx5_0",
            link_type_eth,
            "a VPI port left in Ethernet mode (no link to the IB switch, no LID)",
        ),
        Fault(
            "wrong_rail",
            ("compute",),
            "mlx5_0",
            wrong_rail,
            "a compute cable swapped into the next rail's leaf",
        ),
        Fault(
            "nic_numa_mismatch",
            ("compute",),
            "mlx5_2",
            nic_numa_mismatch,
            "a compute NIC in the other socket's slot",
        ),
        Fault("pcie_x8", ("compute",), "gpu2", pcie_x8, "a PCIe link trained at x8"),
        Fault("pcie_gen3", ("compute",), "gpu5", pcie_gen3, "a PCIe link trained at Gen3 (8GT/s)"),
        Fault("missing_dimm", ALL, "", missing_dimm, "one DIMM slot empty"),
        Fault(
            "fw_reset_needed",
            ("compute",),
            "mlx5_1",
            fw_reset_needed,
            "a port in ETH on a card a warm reboot does not reset (needs mlxfwreset or a power cycle)",
        ),
        Fault(
            "ofed_version_drift",
            ALL,
            "",
            ofed_version_drift,
            "installed from the external mirror: another OFED",
        ),
        Fault("driver_version_drift", ("compute",), "", driver_version_drift, "another NVIDIA driver"),
        Fault(
            "ofed_kernel_mismatch",
            ALL,
            "",
            ofed_kernel_mismatch,
            "mlx5_core module not from the userspace OFED",
        ),
        Fault(
            "ofed_kmod_stale",
            ALL,
            "",
            ofed_kmod_stale,
            "OFED kernel module updated on disk, the old one still loaded (no reboot)",
        ),
        Fault("etc_drift", ALL, "", etc_drift, "a hand-edited managed /etc file"),
        Fault("external_repo", ALL, "", external_repo, "an extra repo file pointing outside the site mirror"),
        Fault("clock_skew", ALL, "", clock_skew, "clock 2.35 s off NTP"),
        Fault("ib_port_down", ALL, "mlx5_1", ib_port_down, "an IB port without physical link"),
        Fault("ib_rate_100", ALL, "mlx5_3", ib_rate_100, "an IB port trained at 100G instead of 200G"),
        Fault(
            "pkey_missing", ("sm",), "", pkey_missing, "the storage partition missing from partitions.conf"
        ),
        Fault("opensm_down", ("sm",), "", opensm_down, "OpenSM stopped and disabled"),
        Fault(
            "irqbalance_unbanned",
            ("compute",),
            "",
            irqbalance_unbanned,
            "irqbalance running with the stock config: it moves the pinned NIC interrupts",
        ),
        Fault(
            "irq_pinning_not_persisted",
            ("compute",),
            "",
            irq_pinning_not_persisted,
            "NIC interrupts pinned, but no boot-time unit: lost at the next boot",
        ),
        Fault(
            "irq_affinity_wrong", ALL, "mlx5_0", irq_affinity_wrong, "a NIC's IRQs pinned to the other socket"
        ),
        Fault(
            "peermem_missing",
            ("compute",),
            "",
            peermem_missing,
            "nvidia-peermem not loaded (no GPUDirect RDMA)",
        ),
        Fault(
            "hca_fw_drift",
            ALL,
            "mlx5_4",
            hca_fw_drift,
            "one card on another firmware than the design and the fleet",
        ),
        Fault(
            "nic_dead",
            ("compute",),
            "mlx5_1",
            nic_dead,
            "a card gone from the PCI bus; the NICs probed after it are renumbered",
        ),
        Fault(
            "cable_ber",
            ("compute",),
            "mlx5_2",
            cable_ber,
            "a marginal cable: symbol errors, low RDMA bandwidth",
        ),
        Fault("slow_node", ("compute",), "", slow_node, "a node slow in every NCCL job, no error shown"),
        Fault(
            "long_job",
            ALL,
            "30",
            long_job,
            "an mpirun launched from the node runs this many seconds (stop, timeout and kill tests)",
        ),
        Fault("spine_link_down", ("sm",), "", spine_link_down, "a leaf-spine link dark (LEAF:SPINE)"),
        Fault(
            "sm_standby_missing", ("sm",), "", sm_standby_missing, "the standby's OpenSM died (no standby)"
        ),
        Fault(
            "no_ibdiagnet",
            ("sm", "compute"),
            "",
            no_ibdiagnet,
            "ibdiagnet (ibutils2) not installed on the node",
        ),
        Fault("unreachable", ALL, "", _behaviour, "connection refused"),
        Fault("hang", ALL, "", _behaviour, "accepts, then never answers a command"),
        Fault("slow", ALL, "", _behaviour, "answers each command after several seconds"),
        Fault(
            "host_key_changed", ALL, "", _behaviour, "presents a host key other than the one in known_hosts"
        ),
    ]
}


def inject(cluster: Cluster, node: NodeState, name: str, arg: str | None) -> None:
    """Apply one fault; FaultError when it does not fit the node."""
    fault = MENU[name]
    if node.kind not in fault.kinds:
        raise FaultError(
            f"{name} applies to {' or '.join(k + ' nodes' for k in fault.kinds)}, "
            f"{node.name} is a {node.kind} node"
        )
    fault.apply(cluster, node, str(arg) if arg is not None else fault.default)
    if name not in node.faults:
        node.faults.append(name)


# Faults a scenario puts on a switch of the fabric (`leaf02: [sm_standby_missing]`):
# the switch's own subnet manager, when the SMs run on switches (sm_runs_on: switch).
SWITCH_FAULTS: dict[str, Callable[[Cluster, str, str], None]] = {
    "sm_standby_missing": switch_sm_standby_missing,
}


def inject_switch(cluster: Cluster, switch: str, name: str, arg: str | None) -> None:
    """Apply one fault to a switch; FaultError when it does not fit."""
    apply = SWITCH_FAULTS.get(name)
    if apply is None:
        raise FaultError(
            f"{name} does not apply to a switch ({switch}); switch faults: {', '.join(SWITCH_FAULTS)}"
        )
    apply(cluster, switch, str(arg) if arg is not None else "")
    done = cluster.switch_faults.setdefault(switch, [])
    if name not in done:
        done.append(name)


# The faults of the GPU-health, platform, firmware, OS and storage checks live in
# their own module (imported last: it builds on Fault and FaultError above).
from .faults_platform import FAULTS as _PLATFORM_FAULTS  # noqa: E402

MENU.update({f.name: f for f in _PLATFORM_FAULTS})
