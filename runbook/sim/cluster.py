"""The whole simulated cluster: nodes built from the design, the fabric, and
what happens to a node when it boots."""

from __future__ import annotations

import time

from . import naming
from .design import Design
from .etcfiles import partitions_conf
from .fabric import Fabric
from .hardware import NodeState, build_compute, build_sm


class Cluster:
    def __init__(self, design: Design, nodes: dict[str, NodeState]):
        self.design = design
        self.nodes = nodes
        self.switch_faults: dict[str, list[str]] = {}  # switch -> faults (faults.inject_switch)
        # The modelled durations of the long tests are multiplied by this
        # (`runbook sim --time-scale`, commands/base.py modelled_wait): 0 runs them at once.
        self.time_scale = 1.0
        self.fabric = Fabric(design, nodes)
        self.fabric.rebuild_ports()
        for sm in self.fabric.switch_sms.values():  # the switch SMs hold the design's PKey plan
            sm.partitions = self.design_partitions()

    @classmethod
    def build(cls, design: Design, count: int) -> Cluster:
        subnet = str(design.var("storage_subnet", "10.20.0.0/16"))
        nodes: dict[str, NodeState] = {}
        for i, name in enumerate(naming.compute_names(count), start=1):
            nodes[name] = build_compute(design, name, i, naming.storage_ip(subnet, i))
        for j, (name, hvars) in enumerate(design.sm_hosts.items(), start=1):
            nodes[name] = build_sm(design, name, j, int(hvars.get("sm_priority", 10)))
        now = time.time()
        for node in nodes.values():
            node.booted_at = now
            if node.opensm.running:
                node.opensm.started_at = now
        cluster = cls(design, nodes)
        text = cluster.design_partitions()
        cluster.design_port_guids()  # recorded as built, before any fault
        for node in nodes.values():
            if node.kind == "sm":
                node.files["/etc/opensm/partitions.conf"] = text
        return cluster

    def node(self, name: str) -> NodeState:
        return self.nodes[name]

    def design_partitions(self) -> str:
        """The PKey plan of the fabric as built (every designed card), kept once
        made: a fault that removes a card later does not change the plan."""
        if getattr(self, "_plan", None) is None:
            self._plan = self._make_partitions()
        return self._plan

    def design_port_guids(self) -> dict[str, dict[str, str]]:
        """host -> {PCI address: port GUID} of every compute and storage NIC as
        built: the site's rack-and-stack record of each node's `ibstat` (the same
        GUIDs the PKey plan lists), kept once made like the plan."""
        if getattr(self, "_port_guids", None) is None:
            self._port_guids = {
                node.name: {
                    f"0000:{nic.bus}": f"0x{nic.guid:016x}"
                    for nic in node.nics
                    if nic.role in ("compute", "storage")
                }
                for node in self.nodes.values()
                if node.kind == "compute"
            }
        return self._port_guids

    def _make_partitions(self) -> str:
        compute, storage = [], []
        for node in self.nodes.values():
            for nic in node.nics:
                (compute if nic.role == "compute" else storage if nic.role == "storage" else []).append(
                    nic.guid
                )
        targets = [int(str(g), 16) for g in self.design.var("storage_target_guids", []) or []]
        return partitions_conf(
            compute,
            storage,
            str(self.design.var("pkey_compute", "0x100")),
            str(self.design.var("pkey_storage", "0x200")),
            targets,
        )

    def boot(self, node: NodeState) -> None:
        """What a (re)boot changes: next-boot firmware config becomes current,
        MST and hand-loaded modules are gone, modules-load.d and enabled
        services come back."""
        for card in node.cards:
            if card.warm_reboot_resets:
                card.link_type = list(card.link_type_next)
        node.mst_started = False
        wanted = {"mlx5_core", "mlx5_ib", "ib_ipoib"}
        if node.gpus:
            wanted |= {"nvidia", "nvidia_uvm"}
        if node.kind == "sm":
            wanted.add("ib_umad")
        for path, text in node.files.items():
            if path.startswith("/etc/modules-load.d/") and path.endswith(".conf"):
                for line in text.splitlines():
                    line = line.split("#", 1)[0].strip()
                    if line:
                        wanted.add(line.replace("-", "_"))
        node.modules = sorted(wanted)
        node.opensm.running = node.opensm.enabled
        node.opensm.started_at = time.time()
        node.irqbalance.running = node.irqbalance.enabled
        # the kernel's default affinity for every interrupt after a boot: all CPUs;
        # a pinning survives a reboot only through a boot-time unit (server.py runs them)
        everything = f"0-{node.ncpus - 1}"
        for irq in node.irqs:
            irq.cpus = everything
        node.versions.pop("ofed_kernel_loaded", None)  # the module on disk is the one loaded now
        node.platform.boot()
        node.boot_count += 1
        node.booted_at = time.time()
        self.fabric.rebuild_ports()
