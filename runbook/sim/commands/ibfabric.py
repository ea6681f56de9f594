"""Fabric-wide discovery: iblinkinfo, ibnetdiscover [-p], ibhosts, ibswitches.
Layouts from fixtures/real-outputs/{iblinkinfo,ibnetdiscover,ibswitches}."""

from __future__ import annotations

import time

from .. import ibformat
from .base import Ctx

SWITCH_SPEED = {"MQM9700": ("4X", "106.25 Gbps", "4xNDR"), "MQM8700": ("4X", "53.125 Gbps", "4xHDR")}


def _can_discover(ctx: Ctx, tool: str, io) -> bool:
    node = ctx.node
    if any(
        ctx.fabric.status(node, n).layer == "InfiniBand" and ctx.fabric.status(node, n).phys == "LinkUp"
        for n in node.nics
    ):
        return True
    io.err.write(
        f"ibwarn: [{4000 + node.index}] mad_rpc_open_port: can't open UMAD port ((null):0)\n"
        f"{tool}: iberror: failed: Failed to open '(null)' port '0'\n"
    )
    return False


def _links(ctx: Ctx):
    """Every switch port: (switch, port, peer) where peer is None (down) or
    (kind, name, port, lid, desc, guid, rate_info, state)."""
    fab = ctx.fabric
    nodes = ctx.cluster.nodes
    for sw in fab.switches.values():
        for port in range(1, sw.nports + 1):
            peer = sw.peers.get(port)
            if peer is None:
                yield sw, port, None
                continue
            if peer[0] == "switch":
                other = fab.switches[peer[1]]
                model = "MQM8700" if "MQM8700" in (sw.desc + other.desc) else "MQM9700"
                yield sw, port, ("switch", other, peer[2], SWITCH_SPEED[model], "Active")
                continue
            node = nodes[peer[1]]
            nic = node.nic(peer[2])
            st = fab.status(node, nic)
            if st.layer != "InfiniBand" or st.phys != "LinkUp":
                yield sw, port, None
                continue
            speed = (
                ibformat.link_width(nic.rate),
                ibformat.lane_speed(nic.rate),
                ibformat.disc_speed(nic.rate),
            )
            yield sw, port, ("ca", node, nic, speed, "Active" if st.state == "Active" else "Initialize")


def _link(speed, state: str) -> str:
    return f"({speed[0]:>3} {speed[1]:>18} {state:>6}/{'LinkUp':>8})"


def iblinkinfo(ctx: Ctx, args, io) -> int:
    if not _can_discover(ctx, "iblinkinfo", io):
        return 255
    fab = ctx.fabric
    cas, switches = [], {}
    for sw, port, peer in _links(ctx):
        rows = switches.setdefault(sw.name, [])
        if peer is None:
            rows.append(
                f'{sw.lid:>12}{port:>5}[  ] ==(                Down/ Polling)==>             [  ] "" ( )'
            )
            continue
        if peer[0] == "switch":
            other, oport, speed, state = peer[1], peer[2], peer[3], peer[4]
            rows.append(
                f"{sw.lid:>12}{port:>5}[  ] =={_link(speed, state)}==>{other.lid:>8}{oport:>5}[  ] "
                f'"{other.desc}" ( )'
            )
            continue
        _, node, nic, speed, state = peer
        lid = fab.status(node, nic).lid
        desc = fab.node_desc(node.name, nic.dev)
        rows.append(f'{sw.lid:>12}{port:>5}[  ] =={_link(speed, state)}==>{lid:>8}{1:>5}[  ] "{desc}" ( )')
        cas.append(
            f"CA: {desc}:\n      0x{nic.guid:016x} {lid:>6} {1:>4}[  ] =={_link(speed, state)}==>"
            f'{sw.lid:>8}{port:>5}[  ] "{sw.desc}" ( )\n'
        )
    out = "".join(cas)
    for name, rows in switches.items():
        sw = fab.switches[name]
        out += f"Switch: 0x{sw.guid:016x} {sw.desc}:\n" + "\n".join(rows) + "\n"
    io.out.write(out)
    return 0


def ibnetdiscover(ctx: Ctx, args, io) -> int:
    if not _can_discover(ctx, "ibnetdiscover", io):
        return 255
    fab = ctx.fabric
    node = ctx.node
    ports_mode = "-p" in args or "--ports" in args
    links = list(_links(ctx))
    if ports_mode:
        out = []
        for sw, port, peer in links:
            if peer is None or peer[0] != "ca":
                continue
            _, n, nic, speed, _ = peer
            lid = fab.status(n, nic).lid
            sp = speed[2][:2] + " " + speed[2][2:]
            out.append(
                f"CA {lid:>5} {1:>2} 0x{nic.guid:016x} {sp} - SW {sw.lid:>5} {port:>2} 0x{sw.guid:016x} "
                f"( '{fab.node_desc(n.name, nic.dev)}' - '{sw.name}' )\n"
            )
            out.append(
                f"SW {sw.lid:>5} {port:>2} 0x{sw.guid:016x} {sp} - CA {lid:>5} {1:>2} 0x{nic.guid:016x} "
                f"( '{sw.name}' - '{fab.node_desc(n.name, nic.dev)}' )\n"
            )
        io.out.write("".join(out))
        return 0
    me = node.nics[0].guid
    stamp = time.strftime("%a %b %e %H:%M:%S %Y")
    out = [f"#\n# Topology file: generated on {stamp}\n#\n# Initiated from node {me:016x} port {me:016x}\n"]
    by_switch: dict[str, list] = {}
    for sw, port, peer in links:
        by_switch.setdefault(sw.name, []).append((port, peer))
    cas = []
    for name, ports in by_switch.items():
        sw = fab.switches[name]
        out.append(
            f"\nvendid=0x2c9\ndevid=0xd2f0\nsysimgguid=0x{sw.guid:x}\nswitchguid=0x{sw.guid:x}({sw.guid:x})\n"
            f'Switch\t{sw.nports} "S-{sw.guid:016x}"\t\t# "{sw.desc}" enhanced port 0 lid {sw.lid} lmc 0\n'
        )
        for port, peer in ports:
            if peer is None:
                continue
            if peer[0] == "switch":
                other, oport, speed = peer[1], peer[2], peer[3]
                out.append(
                    f'[{port}]\t"S-{other.guid:016x}"[{oport}]\t\t# "{other.desc}" lid {other.lid} {speed[2]}\n'
                )
            else:
                _, n, nic, speed, _ = peer
                lid = fab.status(n, nic).lid
                desc = fab.node_desc(n.name, nic.dev)
                out.append(
                    f'[{port}]\t"H-{nic.guid:016x}"[1]({nic.guid:x}) \t\t# "{desc}" lid {lid} {speed[2]}\n'
                )
                cas.append(
                    f"\nvendid=0x2c9\ndevid=0x{n.hca(nic).pci_device}\nsysimgguid=0x{n.sys_image_guid(nic):x}\n"
                    f'caguid=0x{nic.guid:x}\nCa\t1 "H-{nic.guid:016x}"\t\t# "{desc}"\n'
                    f'[1]({nic.guid:x}) \t"S-{sw.guid:016x}"[{port}]\t\t# lid {lid} lmc 0 '
                    f'"{sw.desc}" lid {sw.lid} {speed[2]}\n'
                )
    io.out.write("".join(out + cas))
    return 0


def ibhosts(ctx: Ctx, args, io) -> int:
    if not _can_discover(ctx, "ibhosts", io):
        return 255
    out = []
    for _, _, peer in _links(ctx):
        if peer and peer[0] == "ca":
            _, n, nic, _, _ = peer
            out.append(f'Ca\t: 0x{nic.guid:016x} ports 1 "{ctx.fabric.node_desc(n.name, nic.dev)}"\n')
    io.out.write("".join(out))
    return 0


def ibswitches(ctx: Ctx, args, io) -> int:
    if not _can_discover(ctx, "ibswitches", io):
        return 255
    io.out.write(
        "".join(
            f'Switch\t: 0x{sw.guid:016x} ports {sw.nports} "{sw.desc}" enhanced port 0 lid {sw.lid} lmc 0\n'
            for sw in ctx.fabric.switches.values()
        )
    )
    return 0


COMMANDS = {
    "iblinkinfo": iblinkinfo,
    "ibnetdiscover": ibnetdiscover,
    "ibhosts": ibhosts,
    "ibswitches": ibswitches,
}
