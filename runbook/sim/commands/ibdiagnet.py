"""`ibdiagnet` (ibdiagnet2, MLNX_OFED's ibutils2): one discovery of the whole
fabric, its checks, the PM counters of every port. The console ends with the
"Fabric Summary" block and the "Summary" stage table in the layout of
fixtures/real-outputs/ibdiagnet/ (Stage / Warnings / Errors / Comment). The
per-port facts go to the database file `<out dir>/ibdiagnet2.db_csv`
(default out dir /var/tmp/ibdiagnet2, `-o DIR`): CSV sections between
START_<NAME> and END_<NAME> lines, each with a header row naming its columns
(NODES, LINKS, PM_INFO). A marginal cable (linkfaults.cable_ber) shows in
PM_INFO on both ends of its link and as errors of the "Port Counters" stage.

Installed everywhere (MLNX_OFED installs ibutils2 by default) except on a
node with the `no_ibdiagnet` scenario entry (linkfaults.no_ibdiagnet)."""

from __future__ import annotations

from .. import linkfaults
from .base import Ctx, split_opts
from .ibfabric import _can_discover

OUT_DIR = "/var/tmp/ibdiagnet2"
DASHES = "-" * 45
STAGES = (
    "Discovery",
    "Lids Check",
    "Links Check",
    "Subnet Manager",
    "Port Counters",
    "Nodes Information",
    "Speed / Width checks",
    "Virtualization",
    "Partition Keys",
    "Temperature Sensing",
    "Create IBNetDiscover File",
)
_PM_COLUMNS = (
    "LinkDownedCounter",
    "LinkErrorRecoveryCounter",
    "SymbolErrorCounter",
    "PortRcvRemotePhysicalErrors",
    "PortRcvErrors",
    "PortXmitDiscards",
    "PortRcvSwitchRelayErrors",
    "ExcessiveBufferOverrunErrors",
    "LocalLinkIntegrityErrors",
    "PortRcvConstraintErrors",
    "PortXmitConstraintErrors",
    "VL15Dropped",
)


def _db_csv(ctx: Ctx, ports) -> tuple[str, int, int, int]:
    """The database text; (text, switches, CAs, ports with errors)."""
    fab = ctx.fabric
    nodes = [
        "NodeDesc,NumPorts,NodeType,ClassVersion,BaseVersion,SystemImageGUID,NodeGUID,PortGUID,"
        "DeviceID,PartitionCap,revision,VendorID,LocalPortNum"
    ]
    cas = 0
    for node in ctx.cluster.nodes.values():
        for nic in node.nics:
            if not fab.ib_link(node, nic):
                continue
            cas += 1
            nodes.append(
                f'"{fab.node_desc(node.name, nic.dev)}",1,1,1,1,0x{node.sys_image_guid(nic):016x},'
                f"0x{nic.guid:016x},0x{nic.guid:016x},{int(node.hca(nic).pci_device, 16)},128,0,0x02c9,1"
            )
    for sw in fab.switches.values():
        nodes.append(
            f'"{sw.desc}",{sw.nports},2,1,1,0x{sw.guid:016x},0x{sw.guid:016x},0x{sw.guid:016x},'
            "54002,8,0,0x02c9,0"
        )
    links = ["NodeGuid1,PortNum1,NodeGuid2,PortNum2"]
    pm = ["NodeGUID,PortGUID,PortNumber," + ",".join(_PM_COLUMNS)]
    bad = 0
    for kind, _name, nic, sw, port, marginal, peer in ports:
        guid = nic.guid if kind == "ca" else sw.guid
        counters = linkfaults.port_errors(marginal)
        bad += any(counters.values())
        pm.append(f"0x{guid:016x},0x{guid:016x},{port}," + ",".join(str(counters[c]) for c in _PM_COLUMNS))
        pguid, pport = (peer[2].guid, 1) if peer[0] == "ca" else (peer[1].guid, peer[2])
        if (guid, port) < (pguid, pport):  # each link once
            links.append(f"0x{guid:016x},{port},0x{pguid:016x},{pport}")
    sections = (("NODES", nodes), ("LINKS", links), ("PM_INFO", pm))
    text = "".join(f"START_{n}\n" + "\n".join(rows) + f"\nEND_{n}\n\n" for n, rows in sections)
    return text, len(fab.switches), cas, bad


def ibdiagnet(ctx: Ctx, args, io) -> int:
    opts, _ = split_opts(args, "oiplPr")
    if not _can_discover(ctx, "ibdiagnet", io):
        return 1
    out_dir = str(opts.get("o") or OUT_DIR).rstrip("/") or "/"
    ports = list(linkfaults.fabric_ports(ctx.cluster))
    db, switches, cas, bad = _db_csv(ctx, ports)
    ctx.node.files[f"{out_dir}/ibdiagnet2.db_csv"] = db
    errors = dict.fromkeys(STAGES, 0)
    errors["Port Counters"] = sum(sum(1 for v in linkfaults.port_errors(p[5]).values() if v) for p in ports)
    errors["Subnet Manager"] = 0 if ctx.fabric.sm_lid() else 1
    total = switches + cas
    lines = [
        DASHES,
        "Discovery",
        f"-I- Discovering ... {total} nodes ({switches} Switches & {cas} CA-s) discovered.",
        "-I- Fabric Discover finished successfully",
        "",
    ]
    for stage in STAGES[1:]:
        ok = not errors[stage]
        lines += [
            DASHES,
            stage,
            f"-I- {stage} finished successfully" if ok else f"-E- {stage} finished with errors",
            "",
        ]
    lines += [
        DASHES,
        "Fabric Summary",
        "",
        f"{'Total Nodes':<24}: {total}",
        f"{'IB Switches':<24}: {switches}",
        f"{'IB Channel Adapters':<24}: {cas}",
        f"{'IB Aggregation Nodes':<24}: 0",
        f"{'IB Routers':<24}: 0",
        "",
        DASHES,
        "Summary",
        f"-I- {'Stage':<26}{'Warnings':<11}{'Errors':<11}Comment",
    ]
    for stage in STAGES:
        lines.append(f"-I- {stage:<26}{0:<11}{errors[stage]}")
    lines += ["", f"-I- You can find detailed errors/warnings in: {out_dir}/ibdiagnet2.log", ""]
    ctx.node.files[f"{out_dir}/ibdiagnet2.log"] = "\n".join(lines) + "\n"
    io.out.write("\n".join(lines) + "\n")
    return 0


COMMANDS = {"ibdiagnet": ibdiagnet}
ONLY_ON = {"ibdiagnet": lambda m: "no_ibdiagnet" not in m.state.faults}
