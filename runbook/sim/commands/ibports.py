"""Per-port InfiniBand tools: ibstat, ibstatus, ibv_devinfo, sminfo, smpquery pkeys.
Layouts from fixtures/real-outputs/{ibstat,ibstatus,ibv_devinfo,sminfo}."""

from __future__ import annotations

from .. import ibformat
from .base import Ctx

CAPMASK = {"InfiniBand": "0xa651e848", "Ethernet": "0x00010000"}
IBSTATUS_STATE = {"Active": "4: ACTIVE", "Initializing": "2: INIT", "Down": "1: DOWN"}
IBSTATUS_PHYS = {"LinkUp": "5: LinkUp", "Polling": "2: Polling", "Disabled": "3: Disabled"}


def _down_rate(st) -> int:
    """ibstat's Rate of a port without link: 10 on IB, 40 on an Ethernet port
    (real mlx5 outputs: "State: Down / Physical state: Disabled / Rate: 40 /
    Link layer: Ethernet")."""
    return 40 if st.layer == "Ethernet" else 10


def _select(ctx: Ctx, names: list[str], tool: str, io):
    nics = ctx.node.nics
    if not names:
        return nics
    found = [n for n in nics if n.dev == names[0]]
    if not found:
        io.err.write(f"{tool}: iberror: failed: '{names[0]}' IB device can't be found\n")
    return found


def ibstat(ctx: Ctx, args, io) -> int:
    node = ctx.node
    flags = [a for a in args if a.startswith("-")]
    names = [a for a in args if not a.startswith("-")]
    if "-l" in flags:
        io.out.write("".join(n.dev + "\n" for n in node.nics))
        return 0
    nics = _select(ctx, names, "ibstat", io)
    if not nics:
        return 255
    if "-p" in flags:
        io.out.write("".join(f"0x{n.guid:016x}\n" for n in nics))
        return 0
    out = []
    for nic in nics:
        st = ctx.fabric.status(node, nic)
        port = (
            f"\tPort 1:\n\t\tState: {st.state}\n\t\tPhysical state: {st.phys}\n"
            f"\t\tRate: {nic.rate if st.phys == 'LinkUp' else _down_rate(st)}\n\t\tBase lid: {st.lid}\n\t\tLMC: 0\n"
            f"\t\tSM lid: {st.sm_lid}\n\t\tCapability mask: {CAPMASK[st.layer]}\n"
            f"\t\tPort GUID: 0x{nic.guid:016x}\n\t\tLink layer: {st.layer}\n"
        )
        if len(names) > 1:
            out.append(port.replace("\t\t", "").replace("\tPort 1:\n", ""))
            continue
        out.append(
            f"CA '{nic.dev}'\n\tCA type: {node.hca(nic).ca_type}\n\tNumber of ports: 1\n"
            f"\tFirmware version: {node.firmware(nic)}\n\tHardware version: 0\n"
            f"\tNode GUID: 0x{nic.guid:016x}\n\tSystem image GUID: 0x{node.sys_image_guid(nic):016x}\n" + port
        )
    io.out.write("".join(out))
    return 0


def ibstatus(ctx: Ctx, args, io) -> int:
    node = ctx.node
    nics = _select(ctx, [a for a in args if not a.startswith("-")], "ibstatus", io)
    if not nics:
        return 1
    out = []
    for nic in nics:
        st = ctx.fabric.status(node, nic)
        gid = ibformat.gid(nic.guid) if st.layer == "InfiniBand" else "unknown"
        out.append(
            f"Infiniband device '{nic.dev}' port 1 status:\n"
            f"\tdefault gid:\t {gid}\n\tbase lid:\t 0x{st.lid:x}\n\tsm lid:\t\t 0x{st.sm_lid:x}\n"
            f"\tstate:\t\t {IBSTATUS_STATE[st.state]}\n\tphys state:\t {IBSTATUS_PHYS[st.phys]}\n"
            f"\trate:\t\t {ibformat.rate_text(nic.rate)}\n\tlink_layer:\t {st.layer}\n\n"
        )
    io.out.write("".join(out))
    return 0


def ibv_devinfo(ctx: Ctx, args, io) -> int:
    node = ctx.node
    names = []
    for i, a in enumerate(args):
        if a in ("-d", "--ib-dev") and i + 1 < len(args):
            names = [args[i + 1]]
        elif a.startswith("--ib-dev="):
            names = [a.split("=", 1)[1]]
    if "-l" in args or "--list" in args:
        io.out.write(f"{len(node.nics)} HCAs found:\n" + "".join(f"\t{n.dev}\n" for n in node.nics))
        return 0
    nics = _select(ctx, names, "ibv_devinfo", io)
    if not nics:
        return 255
    blocks = []
    states = {"Active": "PORT_ACTIVE (4)", "Initializing": "PORT_INIT (2)", "Down": "PORT_DOWN (1)"}
    for nic in nics:
        st = ctx.fabric.status(node, nic)
        guid = ibformat.colon_guid(nic.guid)
        mtu = "4096 (5)" if st.layer == "InfiniBand" and st.state == "Active" else "1024 (3)"
        blocks.append(
            f"hca_id:\t{nic.dev}\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t{node.firmware(nic)}\n"
            f"\tnode_guid:\t\t\t{guid}\n\tsys_image_guid:\t\t\t{ibformat.colon_guid(node.sys_image_guid(nic))}\n"
            f"\tvendor_id:\t\t\t0x02c9\n"
            f"\tvendor_part_id:\t\t\t{node.hca(nic).vendor_part}\n\thw_ver:\t\t\t\t0x0\n"
            f"\tboard_id:\t\t\t{node.card_of(nic).psid}\n\tphys_port_cnt:\t\t\t1\n"
            f"\t\tport:\t1\n\t\t\tstate:\t\t\t{states[st.state]}\n\t\t\tmax_mtu:\t\t4096 (5)\n"
            f"\t\t\tactive_mtu:\t\t{mtu}\n\t\t\tsm_lid:\t\t\t{st.sm_lid}\n\t\t\tport_lid:\t\t{st.lid}\n"
            f"\t\t\tport_lmc:\t\t0x00\n\t\t\tlink_layer:\t\t{st.layer}\n"
        )
    io.out.write("\n".join(blocks) + "\n")
    return 0


def sminfo(ctx: Ctx, args, io) -> int:
    """The master SM as this node's first IB port sees it; `sminfo LID` asks the SM at LID;
    `-C DEV -P PORT` (infiniband-diags' common options) queries from that port."""
    node = ctx.node
    fab = ctx.fabric
    dev, rest, i = None, [], 0
    while i < len(args):
        if args[i] in ("-C", "--Ca", "-P", "--Port") and i + 1 < len(args):
            if args[i] in ("-C", "--Ca"):
                dev = args[i + 1]
            i += 2
            continue
        rest.append(args[i])
        i += 1
    if dev is not None and node.nic(dev) is None:
        io.err.write(
            f"ibwarn: [{4000 + node.index}] mad_rpc_open_port: can't open UMAD port ({dev}:1)\n"
            f"sminfo: iberror: failed: Failed to open '{dev}' port '1'\n"
        )
        return 255
    candidates = [node.nic(dev)] if dev is not None else node.nics
    port = next(
        (
            n
            for n in candidates
            if fab.status(node, n).state == "Active" and fab.status(node, n).layer == "InfiniBand"
        ),
        None,
    )
    master = fab.master()
    target = master
    lids = [a for a in rest if not a.startswith("-")]
    if lids and port is not None:
        try:
            lid = int(lids[0], 0)
        except ValueError:
            io.err.write(f"sminfo: iberror: failed: can't resolve destination port {lids[0]}\n")
            return 255
        target = next((s for s in fab.sm_ports() if s.lid == lid), None)
    if port is None or target is None:
        io.err.write("sminfo: iberror: query failed\n")
        return 255
    role = fab.sm_role(target)
    state = {"MASTER": "3 SMINFO_MASTER", "STANDBY": "2 SMINFO_STANDBY"}.get(role, "0 SMINFO_NOTACTIVE")
    io.out.write(
        f"sminfo: sm lid {target.lid} sm guid 0x{target.guid:x}, activity count "
        f"{fab.activity(target)} priority {target.priority} state {state}\n"
    )
    return 0


def smpquery(ctx: Ctx, args, io) -> int:
    """smpquery pkeys|portinfo for this node's own ports (-C DEV, LID argument ignored)."""
    dev = None
    rest = []
    i = 0
    while i < len(args):
        if args[i] in ("-C", "--Ca") and i + 1 < len(args):
            dev, i = args[i + 1], i + 2
            continue
        if not args[i].startswith("-"):
            rest.append(args[i])
        i += 1
    node = ctx.node
    nic = node.nic(dev) if dev else node.nics[0]
    if nic is None or not rest or rest[0] not in ("pkeys", "portinfo"):
        io.err.write("smpquery: only 'smpquery [-C DEV] pkeys|portinfo' is simulated\n")
        return 255
    st = ctx.fabric.status(node, nic)
    if st.layer != "InfiniBand" or st.phys != "LinkUp":
        io.err.write("smpquery: iberror: failed: operation pkeys: pkey table query failed\n")
        return 255
    if rest[0] == "pkeys":
        table = (ctx.fabric.pkeys(node, nic) + [0] * 128)[:128]
        out = "".join(
            f"{k:>4}: " + " ".join(f"0x{p:04x}" for p in table[k : k + 8]) + "\n" for k in range(0, 128, 8)
        )
        io.out.write(out + "128 pkeys capacity for this port\n")
        return 0
    io.out.write(
        f"# Port info: Lid {st.lid} port 1\nLid:.............................{st.lid}\n"
        f"SMLid:...........................{st.sm_lid}\n"
        f"LinkState:.......................{st.state if st.state != 'Initializing' else 'Initialize'}\n"
        f"PhysLinkState:...................{st.phys}\nLinkWidthActive:.................4X\n"
    )
    return 0


COMMANDS = {
    "ibstat": ibstat,
    "ibstatus": ibstatus,
    "ibv_devinfo": ibv_devinfo,
    "sminfo": sminfo,
    "smpquery": smpquery,
}
