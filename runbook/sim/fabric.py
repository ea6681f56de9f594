"""The InfiniBand subnet: switches, cables, LIDs, the subnet manager, PKeys.

Rail i of every compute node is cabled to port <node index> of rail i's leaf;
storage ports go to a storage leaf; each leaf has one uplink to every spine;
the SM nodes hang off the spines. LIDs are planned once (OpenSM keeps its
guid2lid assignments across restarts and fail-over) but a port only *has* its
LID while it is in IB mode, has physical link, and some SM is MASTER.
The SMs run on the SM nodes (OpenSM) or, with the design's sm_runs_on: switch,
on managed switches (the switch's embedded SM, on its management port 0; no
host runs OpenSM then). The master is the running SM with the highest priority
(lowest GUID wins a tie); its partitions.conf decides every port's PKey table,
re-read on each sweep, i.e. on every question asked here.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field

from . import partitions
from .design import Design
from .hardware import IB, Nic, NodeState
from .leafflows import LeafFlows


@dataclass
class Switch:
    name: str
    guid: int
    lid: int
    desc: str
    nports: int = 64
    peers: dict[int, tuple] = field(
        default_factory=dict
    )  # port -> ("node", name, dev) | ("switch", name, port)


@dataclass
class SwitchSM:
    """The subnet manager a managed switch runs (`ib sm` on the switch's CLI)."""

    switch: str
    priority: int
    enabled: bool = True  # `no ib sm` (or a crashed SM process): not in the subnet
    started_at: float = field(default_factory=time.time)
    partitions: str = ""  # the switch's PKey configuration, as partitions.conf text


@dataclass
class SmPort:
    """One port an SM runs on, wherever it runs: what saquery -s and sminfo see."""

    name: str  # the SM node's or the switch's name
    lid: int
    guid: int
    port_num: int  # 1 on an HCA, 0 (the management port) on a switch
    priority: int
    started_at: float
    partitions: str | None
    node: NodeState | None = None  # the SM node (None: a switch)


@dataclass
class PortStatus:
    state: str  # Active | Initializing | Down
    phys: str  # LinkUp | Polling
    lid: int
    sm_lid: int
    layer: str  # InfiniBand | Ethernet


class Fabric:
    def __init__(self, design: Design, nodes: dict[str, NodeState]):
        self.design = design
        self.nodes = nodes
        self.compute = [n for n in nodes.values() if n.kind == "compute"]
        self.sms = [n for n in nodes.values() if n.kind == "sm"]
        leaves = design.all_vars.get("rail_leaves") or {1: "leaf01", 2: "leaf02", 3: "leaf03", 4: "leaf04"}
        self.rail_leaf = {int(k): str(v) for k, v in leaves.items()}
        spine_names = [str(s) for s in design.all_vars.get("spines") or ["spine01"]]
        self.switches: dict[str, Switch] = {}
        lid = len(self.sms) + 1
        for name in spine_names + list(self.rail_leaf.values()) + ["stor01"]:
            model = "MQM8700" if name == "stor01" else "MQM9700"
            self.switches[name] = Switch(name, 0xFC6A1C0300A00000 + lid, lid, f"MF0;{name}:{model}/U1")
            lid += 1
        self.spines = spine_names
        self.switch_sms: dict[str, SwitchSM] = {
            name: SwitchSM(name, priority)
            for name, priority in design.switch_sms.items()
            if name in self.switches
        }
        self._master_key: tuple | None = None  # what master() was last computed from
        self._master: SmPort | None = None
        self.lid_of: dict[tuple[str, str], int] = {}
        self.down_uplinks: set[tuple[str, str]] = set()  # (leaf, spine) links without light
        self.flows = LeafFlows()  # the ib_write_bw flows between leaves running now (pathmodel.py)
        for j, sm in enumerate(self.sms):
            self.lid_of[(sm.name, sm.nics[0].dev)] = j + 1
        for node in self.compute:
            for nic in node.nics:
                self.lid_of[(node.name, nic.dev)] = lid
                lid += 1
        self.cable_design()

    # ---- cabling -----------------------------------------------------------
    def cable_design(self) -> None:
        """Set every NIC's cable as designed (faults may move them afterwards)."""
        count = len(self.compute)
        for node in self.compute:
            storage = [n for n in node.nics if n.role == "storage"]
            for nic in node.nics:
                if nic.role == "compute":
                    nic.cable = [self.rail_leaf.get(nic.rail, "leaf01"), node.index]
                else:
                    nic.cable = ["stor01", (node.index - 1) * len(storage) + storage.index(nic) + 1]
        per = self.uplinks_per_spine()
        for j, sm in enumerate(self.sms):  # after the leaves' ports on the spine
            sm.nics[0].cable = [
                self.spines[j % len(self.spines)],
                (len(self.rail_leaf) + 1) * per + 1 + j // len(self.spines),
            ]
        self._uplink_base = {leaf: count + 1 for leaf in self.rail_leaf.values()}
        nstor = max((len([n for n in c.nics if n.role == "storage"]) for c in self.compute), default=0)
        self._uplink_base["stor01"] = count * nstor + 1

    def uplinks_per_spine(self) -> int:
        """The design's leaf-spine cabling (leaf_uplinks.per_spine): the fat
        tree's oversubscription, e.g. 48 x 200G down and 4 x 4 x 400G up = 1.5:1."""
        return int((self.design.var("leaf_uplinks") or {}).get("per_spine", 1))

    def rebuild_ports(self) -> None:
        """Fill the switches' port tables from the NICs' cables (after cables move)."""
        for sw in self.switches.values():
            sw.peers = {}
        leaves = list(self.rail_leaf.values()) + ["stor01"]
        per = self.uplinks_per_spine()
        for li, leaf in enumerate(leaves):
            for si, spine in enumerate(self.spines):
                for k in range(per):
                    if k == 0 and (leaf, spine) in self.down_uplinks:  # sim/linkfaults.py spine_link_down
                        continue  # one of the `per` cables dark
                    lp = self._uplink_base[leaf] + si * per + k
                    sp = li * per + k + 1
                    self.switches[leaf].peers[lp] = ("switch", spine, sp)
                    self.switches[spine].peers[sp] = ("switch", leaf, lp)
        for node in list(self.sms) + self.compute:
            for nic in node.nics:
                if nic.cable and nic.cable[0] in self.switches:
                    self.switches[nic.cable[0]].peers[int(nic.cable[1])] = ("node", node.name, nic.dev)
        for sw in self.switches.values():
            sw.nports = max([64] + list(sw.peers))

    # ---- subnet manager -----------------------------------------------------
    def link_up(self, node: NodeState, nic: Nic) -> bool:
        return nic.phys_up and bool(nic.cable)

    def ib_link(self, node: NodeState, nic: Nic) -> bool:
        """Physical IB link to the fabric: cabled, up, and the port speaks IB."""
        return self.link_up(node, nic) and node.link_type(nic) == IB

    def sm_ports(self) -> list[SmPort]:
        """Every running SM with link to the subnet: the SM nodes' OpenSM, then the switches' SMs."""
        out = []
        for s in self.sms:
            nic = s.nics[0]
            if s.opensm.running and self.ib_link(s, nic):
                text = s.files.get("/etc/opensm/partitions.conf")
                out.append(
                    SmPort(
                        s.name,
                        self.lid_of[(s.name, nic.dev)],
                        nic.guid,
                        1,
                        s.opensm.priority,
                        s.opensm.started_at,
                        text,
                        s,
                    )
                )
        for sm in self.switch_sms.values():
            if sm.enabled:
                sw = self.switches[sm.switch]
                out.append(SmPort(sw.name, sw.lid, sw.guid, 0, sm.priority, sm.started_at, sm.partitions))
        return out

    def disabled_switch_sms(self) -> list[Switch]:
        """Switches whose SM is configured off: their port 0 has IsSMdisabled."""
        return [self.switches[sm.switch] for sm in self.switch_sms.values() if not sm.enabled]

    def master(self) -> SmPort | None:
        """The master SM. Every port's state, LID and PKey table asks for it (a
        `cat .../pkeys/*` 128 times per port), so it is kept while what decides
        it is unchanged: each SM's running state, priority, start, link and
        partitions.conf (the text itself: a file written anew is a new string)."""
        key = self._sm_inputs()
        if key != self._master_key:
            running = self.sm_ports()
            self._master = sorted(running, key=lambda s: (-s.priority, s.guid))[0] if running else None
            self._master_key = key
        return self._master

    def _sm_inputs(self) -> tuple:
        """Everything sm_ports() reads, cheaply compared."""
        out: list = []
        for s in self.sms:
            nic = s.nics[0]
            out += (
                s.opensm.running,
                s.opensm.priority,
                s.opensm.started_at,
                nic.phys_up,
                tuple(nic.cable or ()),
                s.link_type(nic),
                nic.guid,
                s.files.get("/etc/opensm/partitions.conf"),
            )
        for sm in self.switch_sms.values():
            out += (sm.switch, sm.enabled, sm.priority, sm.started_at, sm.partitions)
        return tuple(out)

    def sm_role(self, sm: NodeState | SmPort) -> str:
        if isinstance(sm, NodeState) and not sm.opensm.running:
            return "NOTACTIVE"
        m = self.master()
        return "MASTER" if m is not None and m.name == sm.name else "STANDBY"

    def sm_lid(self) -> int:
        m = self.master()
        return m.lid if m else 0

    def activity(self, sm: SmPort) -> int:
        return 100 + int((time.time() - sm.started_at) * 3)

    def status(self, node: NodeState, nic: Nic) -> PortStatus:
        layer = "InfiniBand" if node.link_type(nic) == IB else "Ethernet"
        if not self.link_up(node, nic):
            return PortStatus("Down", "Polling", 0, 0, layer)
        if layer == "Ethernet":
            # An Ethernet-mode port cabled to an IB switch never trains a link
            # (the two ends speak different link protocols): Down, no LID.
            return PortStatus("Down", "Disabled", 0, 0, layer)
        sm_lid = self.sm_lid()
        if not sm_lid:
            return PortStatus("Initializing", "LinkUp", 0, 0, layer)
        return PortStatus("Active", "LinkUp", self.lid_of.get((node.name, nic.dev), 0), sm_lid, layer)

    def pkeys(self, node: NodeState, nic: Nic) -> list[int]:
        """The port's PKey table (what sysfs pkeys/N and smpquery show): status()'s
        answer with the master asked once (a `cat pkeys/*` reads 128 per port)."""
        return list(self.pkey_table(node, nic))

    def pkey_table(self, node: NodeState, nic: Nic) -> tuple[int, ...]:
        """pkeys() without the copy, for one slot's read (sysfs pkeys/N)."""
        if node.link_type(nic) != IB:
            return ()
        master = self.master()
        if not self.link_up(node, nic) or master is None or not master.lid:  # not Active
            return (0xFFFF,)
        return _pkey_table(master.partitions, nic.guid, master.node is node)

    def ipoib_mtu(self, pkey: int) -> int:
        """Datagram-mode IPoIB MTU on a partition: its broadcast group's IB MTU
        (partitions.conf `mtu=`, IBTA code: 4 = 2048, 5 = 4096) minus the 4-byte
        IPoIB header: 2044 by default, 4092 with mtu=5 (fixtures ip-link-ipoib)."""
        master = self.master()
        text = master.partitions if master else None
        parts = _parse(text) if text else ()
        code = next((p.mtu for p in parts if p.pkey == pkey & 0x7FFF), 4)
        return (128 << code) - 4

    def node_desc(self, node_name: str, dev: str) -> str:
        """The port's node description as rdma-ndd sets it ("%h %d"): the host
        name as the node knows it, i.e. its FQDN on most sites."""
        node = self.nodes.get(node_name)
        domain = str(self.design.var("dns_domain", "") or "")
        if node is not None and node.kind == "compute" and domain:
            return f"{node_name}.{domain} {dev}"
        return f"{node_name} {dev}"


# The master's partitions.conf is the same text for every port of the fabric: it is
# parsed, and each port's table computed from it, once per text (Partition objects
# are read, never changed, after parsing: partitions.py).
_parse = functools.lru_cache(maxsize=64)(partitions.parse)


@functools.lru_cache(maxsize=16384)
def _pkey_table(text: str | None, guid: int, is_sm_port: bool) -> tuple[int, ...]:
    parts = _parse(text) if text is not None else None
    return tuple(partitions.pkey_table(parts, guid, is_sm_port))
