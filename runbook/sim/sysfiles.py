"""The computed files of a node: /sys/class/infiniband, PCI sysfs, /proc/irq,
/proc/interrupts, /proc/meminfo, /sys/module, the OpenSM log.

`table()` returns {path: getter} and {path: writer}; getters run on every read
(getter(path) -> text, writer(path, text)), so a file always shows the current state.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

from . import ibformat
from .cluster import Cluster
from .cpus import format_cpulist, format_mask, parse_cpulist, parse_mask
from .hardware import NodeState
from .irqbalance import effective_cpus
from .platform_files import platform_files

PKEY_SLOTS = 128  # a ConnectX port's PKey table: sysfs pkeys/0 .. pkeys/127

STATE_TEXT = {"Active": "4: ACTIVE", "Initializing": "2: INIT", "Down": "1: DOWN"}
PHYS_TEXT = {"LinkUp": "5: LinkUp", "Polling": "2: Polling", "Disabled": "3: Disabled"}


class InvalidWrite(Exception):
    """The kernel refused the value (EINVAL)."""


def table(cluster: Cluster, node: NodeState):
    files: dict[str, Callable[[str], str]] = {}
    writers: dict[str, Callable[[str, str], None]] = {}
    fab = cluster.fabric

    # A getter gets the path it serves, so one function serves many paths (a
    # port's 128 PKey slots, every CPU's cpufreq files, every IRQ's files): a
    # table of a few dozen functions rather than thousands of closures keeps the
    # garbage collector's full passes short (each one visits every live
    # function; a lab of 1,000 nodes held millions of them).
    def live(_path: str) -> str:
        return "live\n"

    def msix(_path: str) -> str:
        return "msix\n"

    for nic in node.nics:
        base = f"/sys/class/infiniband/{nic.dev}"
        port = f"{base}/ports/1"

        def st(nic=nic):
            return fab.status(node, nic)

        files[f"{port}/link_layer"] = lambda _p, st=st: st().layer + "\n"
        files[f"{port}/state"] = lambda _p, st=st: STATE_TEXT[st().state] + "\n"
        files[f"{port}/phys_state"] = lambda _p, st=st: PHYS_TEXT[st().phys] + "\n"
        files[f"{port}/rate"] = lambda _p, nic=nic: ibformat.rate_text(nic.rate) + "\n"
        files[f"{port}/lid"] = lambda _p, st=st: f"0x{st().lid:x}\n"
        files[f"{port}/sm_lid"] = lambda _p, st=st: f"0x{st().sm_lid:x}\n"
        files[f"{port}/lid_mask_count"] = lambda _p: "0\n"
        files[f"{port}/gids/0"] = lambda _p, nic=nic: ibformat.gid(nic.guid) + "\n"
        pkey_slot = PkeySlots(fab, node, nic)
        for i in range(PKEY_SLOTS):
            files[f"{port}/pkeys/{i}"] = pkey_slot
        files[f"{base}/node_guid"] = lambda _p, nic=nic: ibformat.colon_guid(nic.guid) + "\n"
        files[f"{base}/sys_image_guid"] = lambda _p, nic=nic: (
            ibformat.colon_guid(node.sys_image_guid(nic)) + "\n"
        )
        files[f"{base}/fw_ver"] = lambda _p, nic=nic: node.firmware(nic) + "\n"
        files[f"{base}/hca_type"] = lambda _p, nic=nic: node.hca(nic).ca_type + "\n"
        files[f"{base}/board_id"] = lambda _p, nic=nic: node.card_of(nic).psid + "\n"
        files[f"{base}/node_desc"] = lambda _p, nic=nic: fab.node_desc(node.name, nic.dev) + "\n"
        files[f"{base}/device/numa_node"] = lambda _p, nic=nic: f"{nic.numa}\n"
        files[f"{base}/device/local_cpulist"] = lambda _p, nic=nic: (
            format_cpulist(node.numa_cpus(nic.numa)) + "\n"
        )
        for irq in nic.irqs:
            files[f"{base}/device/msi_irqs/{irq}"] = msix
        files[f"/sys/class/net/{nic.netdev}/operstate"] = lambda _p, st=st: (
            "up\n" if st().state == "Active" and st().layer == "InfiniBand" else "down\n"
        )
        _pci(files, node, nic.bus, lambda nic=nic: nic.numa, nic.link)
        # the PCI device's RDMA name (how a NIC is found by its slot, not by probe order)
        files[f"/sys/bus/pci/devices/0000:{nic.bus}/infiniband/{nic.dev}/node_guid"] = lambda _p, nic=nic: (
            ibformat.colon_guid(nic.guid) + "\n"
        )
        if node.link_type(nic) == 1:
            _ipoib(files, fab, node, nic, nic.netdev, 0xFFFF, "datagram")
            for child in node.ipoib_children:
                if child.parent == nic.netdev:
                    _ipoib(files, fab, node, nic, child.name, child.pkey, child.mode)
    for gpu in node.gpus:
        _pci(files, node, gpu.bus, lambda gpu=gpu: gpu.numa, gpu.link)

    _irq_files(files, writers, node)

    files["/proc/interrupts"] = lambda _p: _interrupts(node)
    files["/proc/meminfo"] = lambda _p: _meminfo(node)
    files["/proc/version"] = lambda _p: (
        f"Linux version {node.versions['kernel']} (mockbuild@iad1-prod-build001."
        "bld.equ.rockylinux.org) (gcc (GCC) 11.4.1 20230605) #1 SMP PREEMPT_DYNAMIC\n"
    )
    files["/proc/cmdline"] = lambda _p: node.platform.kernel_args + "\n"
    files.update(platform_files(node))
    files["/proc/uptime"] = lambda _p: f"{max(0.0, time.time() - node.booted_at):.2f} 0.00\n"
    files["/proc/sys/kernel/hostname"] = lambda _p: node.name + "\n"

    # the LOADED module's version: differs from the file on disk (modinfo)
    # until the next boot after an update (ofed_kernel_loaded, see faults.py)
    def version(path: str) -> str:
        v = node.versions
        loaded_ofed = v.get("ofed_kernel_loaded") or v["ofed_kernel"]
        mod = path.split("/")[3]  # /sys/module/<mod>/version
        return {"mlx5_core": loaded_ofed, "nvidia": v["driver"], "nvidia_peermem": v["driver"]}[mod] + "\n"

    for mod in node.modules:
        files[f"/sys/module/{mod}/initstate"] = live
        if mod in ("mlx5_core", "nvidia", "nvidia_peermem"):
            files[f"/sys/module/{mod}/version"] = version
    if node.kind == "sm":
        files["/var/log/opensm.log"] = lambda _p: _opensm_log(cluster, node)
    return files, writers


def _irq_files(files, writers, node: NodeState) -> None:
    """/proc/irq/<n>/{smp_affinity_list,smp_affinity,node}: five functions for
    every IRQ of the node, each finding its IRQ by the number in the path."""
    by_number = {irq.number: irq for irq in node.irqs}

    def irq_of(path: str):
        return by_number[int(path.split("/")[3])]  # /proc/irq/<n>/...

    def get_list(path: str) -> str:
        return effective_cpus(node, irq_of(path)) + "\n"

    def get_mask(path: str) -> str:
        return format_mask(parse_cpulist(effective_cpus(node, irq_of(path)), node.ncpus), node.ncpus) + "\n"

    def get_node(path: str) -> str:
        return f"{node.nic(irq_of(path).dev).numa}\n"

    def set_list(path: str, text: str) -> None:
        irq = irq_of(path)
        try:
            irq.cpus = format_cpulist(parse_cpulist(text, node.ncpus))
        except ValueError:
            raise InvalidWrite("Invalid argument") from None

    def set_mask(path: str, text: str) -> None:
        irq = irq_of(path)
        try:
            irq.cpus = format_cpulist(parse_mask(text, node.ncpus))
        except ValueError:
            raise InvalidWrite("Invalid argument") from None

    for irq in node.irqs:
        files[f"/proc/irq/{irq.number}/smp_affinity_list"] = get_list
        files[f"/proc/irq/{irq.number}/smp_affinity"] = get_mask
        files[f"/proc/irq/{irq.number}/node"] = get_node
        writers[f"/proc/irq/{irq.number}/smp_affinity_list"] = set_list
        writers[f"/proc/irq/{irq.number}/smp_affinity"] = set_mask


def _ipoib(files, fab, node: NodeState, nic, name: str, pkey: int, mode: str) -> None:
    """/sys/class/net/<ipoib if>/{pkey,mode,mtu}: the ib_ipoib driver's
    attributes ("0x8200", "datagram"|"connected")."""
    net = f"/sys/class/net/{name}"
    files[f"{net}/pkey"] = lambda _p: f"0x{pkey:04x}\n"
    files[f"{net}/mode"] = lambda _p: mode + "\n"
    files[f"{net}/mtu"] = lambda _p: f"{fab.ipoib_mtu(pkey) if mode == 'datagram' else 65520}\n"
    if pkey != 0xFFFF:
        files[f"{net}/parent"] = lambda _p: nic.netdev + "\n"

        def up(_path: str) -> str:
            table = fab.pkeys(node, nic)
            ok = fab.status(node, nic).state == "Active" and any(p & 0x7FFF == pkey & 0x7FFF for p in table)
            return "up\n" if ok else "down\n"

        files[f"{net}/operstate"] = up


def _pkey(table: tuple[int, ...], index: int) -> str:
    return f"0x{table[index]:04x}\n" if index < len(table) else "0x0000\n"


class PkeySlots:
    """The getter of a port's 128 sysfs PKey slots (pkeys/N). `many` answers a
    run of them with the port's table asked once: what as many single reads give
    while nothing changes between them (NodeFs.read_many: one command's reads;
    a `grep . pkeys/*` reads 896 slots, each asking for the master SM)."""

    __slots__ = ("fab", "node", "nic")

    def __init__(self, fab, node: NodeState, nic) -> None:
        self.fab, self.node, self.nic = fab, node, nic

    def __call__(self, path: str) -> str:
        return _pkey(self.fab.pkey_table(self.node, self.nic), int(path[path.rfind("/") + 1 :]))

    def many(self, paths: list[str]) -> list[str]:
        texts = _slot_texts(self.fab.pkey_table(self.node, self.nic))
        return [texts[int(p[p.rfind("/") + 1 :])] for p in paths]


@functools.lru_cache(maxsize=256)
def _slot_texts(table: tuple[int, ...]) -> tuple[str, ...]:
    """_pkey(table, i) for every slot i of a port (PKEY_SLOTS): a lab's ports share
    a few tables, so each is written out once (PkeySlots.many)."""
    return tuple(_pkey(table, i) for i in range(PKEY_SLOTS))


def _pci(files, node: NodeState, bus: str, numa, link) -> None:
    dev = f"/sys/bus/pci/devices/0000:{bus}"
    files[f"{dev}/numa_node"] = lambda _p: f"{numa()}\n"
    files[f"{dev}/current_link_speed"] = lambda _p: _sysfs_speed(link.current_speed()) + "\n"
    files[f"{dev}/current_link_width"] = lambda _p: f"{link.width}\n"
    files[f"{dev}/max_link_speed"] = lambda _p: _sysfs_speed(link.cap_speed) + "\n"
    files[f"{dev}/max_link_width"] = lambda _p: f"{link.cap_width}\n"


def _sysfs_speed(speed: str) -> str:
    """current_link_speed as the kernel prints it: '16.0 GT/s PCIe', '2.5 GT/s PCIe'."""
    value = speed.replace("GT/s", "")
    return f"{value}.0 GT/s PCIe" if "." not in value else f"{value} GT/s PCIe"


def _interrupts(node: NodeState) -> str:
    n = node.ncpus
    head = " " * 5 + "".join(f"CPU{c:<8d}" for c in range(n)).rstrip()
    lines = [head]
    for irq in node.irqs:
        counts = "".join(f"{0:>11d}" for _ in range(n))
        lines.append(
            f"{irq.number:>4d}:{counts}  IR-PCI-MSIX-0000:{node.nic(irq.dev).bus}"
            f" {irq.number % 16}-edge      {irq.name}"
        )
    return "\n".join(lines) + "\n"


def _meminfo(node: NodeState) -> str:
    total_kb = node.memory_gb() * 1024 * 1024 * 985 // 1000
    free_kb = total_kb * 97 // 100
    return (
        f"MemTotal:       {total_kb:>10d} kB\nMemFree:        {free_kb:>10d} kB\n"
        f"MemAvailable:   {free_kb:>10d} kB\nBuffers:          {4096:>8d} kB\n"
        f"HugePages_Total:       0\nHugePages_Free:        0\nHugepagesize:       2048 kB\n"
    )


def _opensm_log(cluster: Cluster, node: NodeState) -> str:
    if not node.opensm.started_at:
        return ""
    stamp = time.strftime("%b %d %H:%M:%S", time.localtime(node.opensm.started_at))
    tid = f"{0x3DA006C0 + node.index:08X}"
    lines = [
        f"{stamp} 000001 [{tid}] 0x03 -> OpenSM 5.17.2.MLNX20231010.2fcfc5e1",
        f"{stamp} 000120 [{tid}] 0x80 -> Entering DISCOVERING state",
    ]
    role = cluster.fabric.sm_role(node)
    if role == "MASTER":
        lines += [
            f"{stamp} 010220 [{tid}] 0x80 -> Entering MASTER state",
            f"{stamp} 412345 [{tid}] 0x80 -> SUBNET UP",
        ]
    elif role == "STANDBY":
        lines.append(f"{stamp} 010220 [{tid}] 0x80 -> Entering STANDBY state")
    else:
        lines.append(f"{stamp} 910000 [{tid}] 0x80 -> Exiting SM")
    return "\n".join(lines) + "\n"
