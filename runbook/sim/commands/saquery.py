"""saquery -s: the PortInfoRecords of every port whose capability mask has
IsSM (0x2) set, i.e. every port an SM runs on (MASTER, STANDBY, ...), in the
layout rdma-core's saquery prints (`PortInfoRecord dump:`, TAB-TAB fields,
dotted keys). Other queries are not simulated and say so. `-C DEV -P PORT`
pick the local port the query leaves from."""

from __future__ import annotations

from .base import Ctx

IS_SM = 0x2
# a CA port's capability mask as an mlx5 HCA reports it (no SM): 0x2651E848;
# an SM port sets IsSM on top of it
CAP_MASK = 0x2651E848


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


def saquery(ctx: Ctx, args, io) -> int:
    dev, query, i = None, None, 0
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
        i += 1
    if dev is not None and ctx.node.nic(dev) is None:
        io.err.write(
            f"ibwarn: [4242] umad_open_port: can't open UMAD port ({dev}:0)\n"
            f"saquery: iberror: failed: Failed to open '{dev}' port '0'\n"
        )
        return 255
    if query != "issm":
        io.err.write(f"saquery: only -s (IsSM PortInfoRecords) is simulated (got {query or 'NodeRecords'})\n")
        return 1
    if _port(ctx, dev) is None or ctx.fabric.master() is None:
        io.err.write("saquery: iberror: failed: Query SA failed: ib_query failed\n")
        return 255
    fab = ctx.fabric
    master_lid = fab.sm_lid()
    blocks = []
    for sm in fab.sms:
        nic = sm.nics[0]
        if not (sm.opensm.running and fab.status(sm, nic).state == "Active"):
            continue
        lid = fab.lid_of[(sm.name, nic.dev)]
        blocks.append(
            "PortInfoRecord dump:\n"
            f"\t\tEndPortLid..............{lid}\n"
            "\t\tPortNum.................1\n"
            f"\t\tbase_lid................{lid}\n"
            f"\t\tmaster_sm_base_lid......{master_lid}\n"
            f"\t\tcapability_mask.........0x{CAP_MASK | IS_SM:X}\n"
        )
    io.out.write("".join(blocks))
    return 0


COMMANDS = {"saquery": saquery}
