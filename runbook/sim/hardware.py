"""Per-node state of the simulated cluster: plain dataclasses, no I/O.

A compute node follows the seed design: two sockets, GPUs `gpu_numa`, one
compute NIC per rail sharing a PCIe switch with its two GPUs (the NIC is PIX to
the first GPU, PXB to the second), storage NICs on root ports, DIMMs, versions,
IRQs of every NIC pinned to the cores of the NIC's NUMA node. SM nodes have
one HCA and no GPUs. Faults (faults.py) change these records; commands read them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from . import hca
from .cpus import format_cpulist
from .design import Design
from .etcfiles import etc_files, irq_affinity_files, sm_files
from .platform import Platform, attach_platform

IB, ETH = 1, 2  # mlxconfig LINK_TYPE values


@dataclass
class PciLink:
    cap_speed: str = "16GT/s"
    cap_width: int = 16
    speed: str = "16GT/s"  # the speed the link trains to under load
    width: int = 16
    # A GPU at idle (P8) drops its link to 2.5GT/s to save power and retrains
    # when work arrives (real idle AD102 capture: LnkSta "Speed 2.5GT/s
    # (downgraded), Width x16"); "" = no power-saving downtraining (NICs).
    idle_speed: str = ""
    busy: int = 0  # running host<->device copies / kernels keeping the link up

    def current_speed(self) -> str:
        """The speed LnkSta, sysfs and nvidia-smi report right now."""
        return self.idle_speed if self.idle_speed and not self.busy else self.speed


@dataclass
class Gpu:
    index: int
    bus: str  # "19:00.0"
    numa: int
    switch: str  # PCIe switch the GPU hangs off ("" = root port)
    sub: str  # second-level switch (same sub => PIX)
    uuid: str
    serial: str
    link: PciLink = field(default_factory=PciLink)


@dataclass
class Card:
    """One ConnectX adapter: mlxconfig acts on cards, LINK_TYPE_P<n> per port."""

    index: int
    part: str
    ports: int
    psid: str
    link_type: list[int]  # current, per port
    link_type_next: list[int]  # what mlxconfig set for the next boot
    # False: a warm reboot does not reset this card's firmware, so the next-boot
    # values load only with mlxfwreset or a power cycle (fault fw_reset_needed)
    warm_reboot_resets: bool = True


@dataclass
class Nic:
    """One PCI function = one RDMA device mlx5_N with one IB port."""

    dev: str
    card: int
    port_on_card: int  # 1 or 2
    bus: str
    numa: int
    design_numa: int
    role: str  # compute | storage | sm
    rail: int  # 0 when not a compute NIC
    netdev: str
    guid: int
    switch: str
    sub: str
    link: PciLink = field(default_factory=PciLink)
    cable: list = field(default_factory=list)  # [switch name, port] or [] (not cabled)
    phys_up: bool = True
    rate: int = 200
    irqs: list[int] = field(default_factory=list)
    marginal: bool = False  # a marginal cable: symbol errors, retransmissions (sim/linkfaults.py)


@dataclass
class Dimm:
    locator: str
    bank: str
    size_gb: int
    present: bool = True
    serial: str = ""


@dataclass
class Irq:
    number: int
    name: str  # mlx5_comp0@pci:0000:18:00.0
    dev: str
    cpus: str  # smp_affinity_list


@dataclass
class IpoibChild:
    """An IPoIB child interface (`ip link add link ib4 name ib4.8200 type ipoib
    pkey 0x8200`): its own P_Key on the parent's port; the storage address lives
    here, not on the parent (which is on the default partition)."""

    name: str  # ib4.8200
    parent: str  # ib4
    pkey: int  # 0x8200 (full-member bit set, as `ip -d link` and sysfs show it)
    mode: str = "datagram"


@dataclass
class OpenSM:
    enabled: bool = False
    running: bool = False
    priority: int = 0
    started_at: float = 0.0


@dataclass
class Irqbalance:
    """RHEL installs and enables irqbalance on every node; while it runs it
    moves every IRQ it is not told to leave alone (sim/irqbalance.py)."""

    enabled: bool = True
    running: bool = True
    started_at: float = 0.0


@dataclass
class NodeState:
    name: str
    kind: str  # compute | sm
    index: int  # 1-based among its kind
    cores_per_socket: int
    sockets: int
    gpus: list[Gpu]
    cards: list[Card]
    nics: list[Nic]
    dimms: list[Dimm]
    versions: dict[str, str]
    files: dict[str, str]
    irqs: list[Irq]
    modules: list[str]
    storage_ip: str = ""
    storage_prefix: int = 16
    mst_started: bool = False
    opensm: OpenSM = field(default_factory=OpenSM)
    irqbalance: Irqbalance = field(default_factory=Irqbalance)
    units_enabled: list[str] = field(default_factory=list)  # unit files of /etc/systemd/system enabled
    clock_offset_s: float = 0.000012
    boot_count: int = 1
    booted_at: float = 0.0
    faults: list[str] = field(default_factory=list)  # names injected by the scenario
    job_seconds: float = 0.0  # an mpirun launched here runs this long (fault long_job, sim/linkfaults.py)
    dirs: list[str] = field(default_factory=list)  # directories made with mkdir
    ipoib_children: list[IpoibChild] = field(default_factory=list)
    firmware_of: dict[int, str] = field(default_factory=dict)  # card index -> running firmware
    platform: Platform = field(
        default_factory=Platform
    )  # GPU health, firmware, OS settings, storage (platform.py)

    @property
    def ncpus(self) -> int:
        return self.cores_per_socket * self.sockets * 2

    def numa_cpus(self, numa: int) -> list[int]:
        """Hyper-threaded layout: node n has cores n*c..n*c+c-1 and their siblings."""
        c, total = self.cores_per_socket, self.cores_per_socket * self.sockets
        first = list(range(numa * c, numa * c + c))
        return first + [x + total for x in first]

    def nic(self, dev: str) -> Nic | None:
        return next((n for n in self.nics if n.dev == dev), None)

    def card_of(self, nic: Nic) -> Card:
        return self.cards[nic.card]

    def hca(self, nic: Nic):
        """The adapter model (hca.HcaModel) of a function's card, by its part number."""
        return hca.of_part(self.cards[nic.card].part)

    def firmware(self, nic: Nic) -> str:
        return self.firmware_of.get(nic.card) or self.hca(nic).firmware

    def sys_image_guid(self, nic: Nic) -> int:
        """The functions of one card share its system image GUID: the node GUID
        of the card's first function (ibv_devinfo sys_image_guid, ibstat)."""
        first = min((n for n in self.nics if n.card == nic.card), key=lambda n: n.port_on_card)
        return first.guid

    def link_type(self, nic: Nic) -> int:
        return self.cards[nic.card].link_type[nic.port_on_card - 1]

    def memory_gb(self, numa: int | None = None) -> int:
        per = len(self.dimms) // self.sockets or 1
        return sum(
            d.size_gb for i, d in enumerate(self.dimms) if d.present and (numa is None or i // per == numa)
        )


def _guid(node_kind: str, index: int, slot: int) -> int:
    kind = 0x10 if node_kind == "compute" else 0x20
    return 0xB8599F0300000000 | (kind << 24) | (index << 8) | slot


def _uuid(name: str, idx: int) -> str:
    h = hashlib.sha256(f"{name}/gpu{idx}".encode()).hexdigest()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _irqs_for(nics: list[Nic], state_cpus, first_irq: int = 120) -> list[Irq]:
    irqs: list[Irq] = []
    for order, nic in enumerate(nics):
        local = state_cpus(nic.design_numa)
        base = first_irq + order * 16
        pci = f"pci:0000:{nic.bus}"
        irqs.append(Irq(base, f"mlx5_async0@{pci}", nic.dev, format_cpulist(local)))
        for k in range(8):
            irqs.append(Irq(base + 1 + k, f"mlx5_comp{k}@{pci}", nic.dev, str(local[k % len(local)])))
        nic.irqs = [base + k for k in range(9)]
    return irqs


def _versions(design: Design) -> dict[str, str]:
    return {
        "os_release": str(design.var("os_release", "Rocky Linux 9.3 (Blue Onyx)")),
        "kernel": str(design.var("kernel_version", "5.14.0-362.24.1.el9_3.x86_64")),
        "ofed": str(design.var("ofed_version", "MLNX_OFED_LINUX-23.10-1.1.9.0")),
        "ofed_kernel": str(design.var("ofed_kernel_version", "23.10-1.1.9")),
        "driver": str(design.var("nvidia_driver_version", "550.90.07")),
        "cuda": str(design.var("cuda_version", "12.4")),
    }


def _dimms(count: int, size_gb: int, sockets: int) -> list[Dimm]:
    per = max(1, count // sockets)
    slots = "ABCDEFGHIJKLMNOP"
    return [
        Dimm(
            f"CPU{i // per}_DIMM_{slots[i % per]}1",
            f"P{i // per} CHANNEL {slots[i % per]}",
            size_gb,
            True,
            f"80AD01{i:02X}{size_gb:04d}",
        )
        for i in range(count)
    ]


def _ipoib_children(design: Design) -> list[IpoibChild]:
    """The storage IPoIB child interface of the design (storage_ipoib_if on
    storage_ipoib_parent with storage_ipoib_pkey), if it runs on a child."""
    child, parent = str(design.var("storage_ipoib_if", "")), str(design.var("storage_ipoib_parent", "") or "")
    if not (parent and child and child != parent):
        return []
    pkey = design.var("storage_ipoib_pkey", design.var("pkey_storage", "0x200"))
    pkey = (int(str(pkey), 0) if isinstance(pkey, str) else int(pkey)) | 0x8000
    return [IpoibChild(child, parent, pkey, str(design.var("storage_ipoib_mode", "datagram")))]


def build_compute(design: Design, name: str, index: int, storage: tuple[str, int]) -> NodeState:
    gpu_numa = [int(n) for n in design.compute_vars["gpu_numa"]]
    sockets = int(design.var("numa_nodes", 2))
    gpus: list[Gpu] = []
    nics: list[Nic] = []
    cards: list[Card] = []
    firmware_of: dict[int, str] = {}
    bus_next = {n: 0x18 + n * 0x80 for n in range(sockets)}

    def take_bus(numa: int, pci: str | None = None) -> int:
        """The next free bus of a socket, or the design's PCI address (`pci:`
        of the NIC, e.g. 0000:18:00.0; the NICs are keyed by it)."""
        b = int(str(pci).split(":")[-2], 16) if pci else bus_next[numa]
        bus_next[numa] = b + 1
        return b

    def new_card(nic_def, ports: int = 1) -> Card:
        model = hca.model(nic_def.get("hca"))
        part, psid, _ = model.parts[ports]
        firmware_of[len(cards)] = str((design.var("hca_firmware") or {}).get(model.family, ""))
        return Card(len(cards), part, ports, psid, [IB], [IB])

    def cap(card: Card) -> PciLink:
        speed = hca.of_part(card.part).pcie_cap
        slot = str(design.var("pcie_nic_speed", "16GT/s"))  # the slot's generation trains the link
        now = slot if hca.SPEED_ORDER.index(speed) > hca.SPEED_ORDER.index(slot) else speed
        return PciLink(speed, 16, now, 16)

    gpu_slot: dict[int, tuple[str, str, int]] = {}
    for nic_def in design.compute_nics:
        numa, dev = int(nic_def["numa"]), str(nic_def["dev"])
        sw = f"sw-{dev}"
        members = [int(g) for g in nic_def.get("gpus", [])]
        bus = take_bus(numa, nic_def.get("pci"))
        cards.append(new_card(nic_def))
        nics.append(
            Nic(
                dev,
                len(cards) - 1,
                1,
                f"{bus:02x}:00.0",
                numa,
                numa,
                "compute",
                int(nic_def["rail"]),
                str(nic_def.get("netdev", "")),
                0,
                sw,
                f"{sw}/a",
                cap(cards[-1]),
            )
        )
        for k, g in enumerate(members):
            gpu_slot[g] = (sw, f"{sw}/a" if k == 0 else f"{sw}/b", take_bus(numa))
        bus_next[numa] = (bus_next[numa] + 8) & ~7
    for g, numa in enumerate(gpu_numa):
        sw, sub, bus = gpu_slot.get(g, (f"sw-gpu{g}", f"sw-gpu{g}/a", take_bus(numa)))
        gpus.append(
            Gpu(
                g,
                f"{bus:02x}:00.0",
                numa,
                sw,
                sub,
                _uuid(name, g),
                f"13236230{index:03d}{g:02d}",
                PciLink(idle_speed="2.5GT/s"),
            )
        )
    gpus.sort(key=lambda x: x.index)
    for nic_def in design.storage_nics:
        numa = int(nic_def["numa"])
        pci = str(nic_def.get("pci") or "")
        sibling = next((n for n in nics if pci and pci.endswith(".1") and n.bus == pci[5:-1] + "0"), None)
        if sibling is not None:  # function .1 of a card already fitted: its second port
            card = cards[sibling.card]
            card.part, card.psid, _ = hca.of_part(card.part).parts[2]
            card.ports = 2
            card.link_type.append(IB)
            card.link_type_next.append(IB)
            nics.append(
                Nic(
                    str(nic_def["dev"]),
                    sibling.card,
                    2,
                    pci[5:],
                    numa,
                    numa,
                    "storage",
                    0,
                    str(nic_def.get("netdev", "")),
                    0,
                    "",
                    "",
                    cap(card),
                )
            )
            continue
        bus = take_bus(numa, nic_def.get("pci"))
        bus_next[numa] = (bus_next[numa] + 8) & ~7
        cards.append(new_card(nic_def))
        nics.append(
            Nic(
                str(nic_def["dev"]),
                len(cards) - 1,
                1,
                f"{bus:02x}:00.0",
                numa,
                numa,
                "storage",
                0,
                str(nic_def.get("netdev", "")),
                0,
                "",
                "",
                cap(cards[-1]),
            )
        )
    # Any further VPI function (mlx5_6 in the seed) is the second port of the
    # last storage card, which thereby becomes a dual-port adapter.
    known = {n.dev for n in nics}
    for dev in design.ib_devices:
        if dev in known:
            continue
        host = nics[-1]
        card = cards[host.card]
        card.part, card.psid, card.ports = "MCX653106A-HDAT", "MT_0000000225", 2
        card.link_type.append(IB)
        card.link_type_next.append(IB)
        nics.append(
            Nic(
                dev,
                host.card,
                2,
                host.bus[:-1] + "1",
                host.numa,
                host.numa,
                "storage",
                0,
                f"ib{len(nics)}",
                0,
                host.switch,
                host.sub,
                cap(card),
            )
        )
    for slot, nic in enumerate(nics):
        nic.guid = _guid("compute", index, slot)
        if not nic.netdev:
            nic.netdev = f"ib{slot}"
    state = NodeState(
        name=name,
        kind="compute",
        index=index,
        cores_per_socket=32,
        sockets=sockets,
        gpus=gpus,
        cards=cards,
        nics=nics,
        dimms=_dimms(int(design.var("dimm_count", 16)), int(design.var("dimm_size_gb", 64)), sockets),
        versions=_versions(design),
        files=etc_files(design, name),
        irqs=[],
        modules=["mlx5_core", "mlx5_ib", "ib_ipoib", "nvidia", "nvidia_uvm", "nvidia_peermem"],
        storage_ip=storage[0],
        storage_prefix=storage[1],
        ipoib_children=_ipoib_children(design),
        firmware_of=firmware_of,
    )
    state.irqs = _irqs_for(nics, state.numa_cpus)
    boot_pinning = irq_affinity_files(design)
    if boot_pinning:  # the site's boot-time pinning, installed and enabled
        state.files.update(boot_pinning)
        state.units_enabled.append(str(design.var("irq_affinity_unit")))
    if str(design.var("irqbalance_policy", "ban")) == "stop":
        state.irqbalance = Irqbalance(enabled=False, running=False)
    attach_platform(design, state)
    return state


def build_sm(design: Design, name: str, index: int, priority: int) -> NodeState:
    cards = [Card(0, "MCX653105A-HDAT", 1, "MT_0000000223", [IB], [IB])]
    nics = [Nic("mlx5_0", 0, 1, "3b:00.0", 0, 0, "sm", 0, "ib0", _guid("sm", index, 0), "", "")]
    # the SM's ConnectX-6 runs the design's firmware of its family, as the compute cards do
    firmware_of = {0: str((design.var("hca_firmware") or {}).get(hca.CONNECTX6.family, ""))}
    state = NodeState(
        name=name,
        kind="sm",
        index=index,
        cores_per_socket=16,
        sockets=2,
        gpus=[],
        cards=cards,
        nics=nics,
        dimms=_dimms(8, 32, 2),
        versions=_versions(design),
        files={**etc_files(design, name, gpus=False), **sm_files(design, name, priority)},
        irqs=[],
        modules=["mlx5_core", "mlx5_ib", "ib_ipoib", "ib_umad"],
        opensm=OpenSM(enabled=True, running=True, priority=priority),
        firmware_of=firmware_of,
    )
    state.irqs = _irqs_for(nics, state.numa_cpus)
    attach_platform(design, state)
    return state
