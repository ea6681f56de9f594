"""saquery -s: the PortInfoRecords of every port whose capability mask has
IsSM (0x2) set, i.e. every port an SM runs on (MASTER, STANDBY, ...), then
those with IsSMdisabled (0x400: an SM configured off, a switch after `no ib
sm`), under the two headings rdma-core's saquery prints (print_issm_records:
"IsSM ports", a blank line, "IsSMdisabled ports"); each record in its layout
(`PortInfoRecord dump:`, TAB-TAB fields, dotted keys, decimal LIDs). An SM on
a switch runs on the switch's management port 0. Without a query option it prints the NodeRecords of every node
(or of one LID: `saquery 134`) as rdma-core's dump_node_record does (layout:
fixtures/real-outputs/saquery/, whose TABs were lost in the mail archive).
Other queries are not simulated and say so. `-C DEV -P PORT` pick the local
port the query leaves from."""

from __future__ import annotations

from .base import Ctx

IS_SM = 0x2
IS_SM_DISABLED = 0x400
# a CA port's capability mask as an mlx5 HCA reports it (no SM): 0x2651E848;
# an SM port sets IsSM on top of it
CAP_MASK = 0x2651E848
# a switch's management port 0. Bits per the IBA PortInfo CapabilityMask: IsSM 1,
# IsSMdisabled 10; the rest of a switch port 0 mask is illustrative, not captured
SWITCH_CAP_MASK = 0x4250084A & ~IS_SM


def _portinfo_record(lid: int, port_num: int, master_lid: int, cap: int) -> str:
    return (
        "PortInfoRecord dump:\n"
        f"\t\tEndPortLid..............{lid}\n"
        f"\t\tPortNum.................{port_num}\n"
        f"\t\tbase_lid................{lid}\n"
        f"\t\tmaster_sm_base_lid......{master_lid}\n"
        f"\t\tcapability_mask.........0x{cap:X}\n"
    )


def _port(ctx: Ctx, dev: str | None):
    fab = ctx.fabric
    nics = [n for n in ctx.node.nics if dev is None or n.dev == dev]
    return next(
        (
            n
            for n in nics
            if fab.status(ctx.node, n).state == "Active" and fab.status(ctx.node, n).layer == "InfiniBand"
        ),
        None,
    )


def _node_record(lid, kind, nports, sys_guid, guid, device_id, port_num, desc) -> str:
    fields = [
        ("lid", str(lid)),
        ("reserved", "0x0"),
        ("base_version", "0x1"),
        ("class_version", "0x1"),
        ("node_type", "Channel Adapter" if kind == "ca" else "Switch"),
        ("num_ports", str(nports)),
        ("sys_guid", f"0x{sys_guid:016x}"),
        ("node_guid", f"0x{guid:016x}"),
        ("port_guid", f"0x{guid:016x}"),
        ("partition_cap", "0x80" if kind == "ca" else "0x8"),
        ("device_id", f"0x{device_id:X}"),
        ("revision", "0x0"),
        ("port_num", str(port_num)),
        ("vendor_id", "0x2C9"),
        ("NodeDescription", desc),
    ]
    return "NodeRecord dump:\n" + "".join(f"\t\t{k.ljust(24, '.')}{v}\n" for k, v in fields)


def _node_records(ctx: Ctx, lid: int | None) -> str:
    fab = ctx.fabric
    out = []
    for node in ctx.cluster.nodes.values():
        for nic in node.nics:
            st = fab.status(node, nic)
            if st.state != "Active" or (lid is not None and st.lid != lid):
                continue
            out.append(
                _node_record(
                    st.lid,
                    "ca",
                    1,
                    node.sys_image_guid(nic),
                    nic.guid,
                    int(node.hca(nic).pci_device, 16),
                    1,
                    fab.node_desc(node.name, nic.dev),
                )
            )
    for sw in fab.switches.values():
        if lid is None or sw.lid == lid:
            out.append(_node_record(sw.lid, "switch", sw.nports, sw.guid, sw.guid, 0xD2F0, 1, sw.desc))
    return "".join(out)


def saquery(ctx: Ctx, args, io) -> int:
    dev, query, i = None, None, 0
    target: int | None = None
    while i < len(args):
        a = args[i]
        if a in ("-C", "--Ca") and i + 1 < len(args):
            dev, i = args[i + 1], i + 2
            continue
        if a in ("-P", "--Port", "-t", "--timeout") and i + 1 < len(args):
            i += 2
            continue
        if a == "-s":
            query = "issm"
        elif a.startswith("-"):
            query = query or a
        elif target is None and a.isdigit():
            target = int(a)
        i += 1
    if dev is not None and ctx.node.nic(dev) is None:
        io.err.write(
            f"ibwarn: [4242] umad_open_port: can't open UMAD port ({dev}:0)\n"
            f"saquery: iberror: failed: Failed to open '{dev}' port '0'\n"
        )
        return 255
    if query not in ("issm", None):
        io.err.write(f"saquery: only NodeRecords and -s (IsSM PortInfoRecords) are simulated (got {query})\n")
        return 1
    if _port(ctx, dev) is None or ctx.fabric.master() is None:
        io.err.write("saquery: iberror: failed: Query SA failed: ib_query failed\n")
        return 255
    if query is None:
        io.out.write(_node_records(ctx, target))
        return 0
    fab = ctx.fabric
    master_lid = fab.sm_lid()
    issm = [
        _portinfo_record(sm.lid, sm.port_num, master_lid, (CAP_MASK if sm.node else SWITCH_CAP_MASK) | IS_SM)
        for sm in fab.sm_ports()
    ]
    disabled = [
        _portinfo_record(sw.lid, 0, master_lid, SWITCH_CAP_MASK | IS_SM_DISABLED)
        for sw in fab.disabled_switch_sms()
    ]
    io.out.write("IsSM ports\n" + "".join(issm) + "\nIsSMdisabled ports\n" + "".join(disabled))
    return 0


COMMANDS = {"saquery": saquery}
