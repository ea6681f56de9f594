"""ip addr|link (incl. -o / -br), and dnf|yum repolist over the node's repo files."""

from __future__ import annotations

import ipaddress
import re

from ..hardware import IB
from .base import Ctx
from .mst import netdev_name


def _interfaces(ctx: Ctx):
    """(index, name, kind, up, carrier, [cidr], mtu, link line)"""
    node = ctx.node
    mgmt = f"10.10.{node.index // 250}.{node.index % 250 + (1 if node.kind == 'compute' else 200)}"
    out = [
        (
            1,
            "lo",
            "loopback",
            True,
            True,
            ["127.0.0.1/8"],
            65536,
            "link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00",
        ),
        (
            2,
            "eno1",
            "ether",
            True,
            True,
            [f"{mgmt}/16"],
            1500,
            f"link/ether 3c:ec:ef:{node.index >> 8 & 255:02x}:{node.index & 255:02x}:{0x10 if node.gpus else 0x20:02x}"
            " brd ff:ff:ff:ff:ff:ff",
        ),
    ]
    storage_if = str(ctx.cluster.design.var("storage_ipoib_if", "ib4"))
    children = {c.parent: c for c in node.ipoib_children}
    for k, nic in enumerate(node.nics):
        st = ctx.fabric.status(node, nic)
        name = netdev_name(node, nic)
        g = f"{nic.guid:016x}"
        if node.link_type(nic) == IB:
            hw = ":".join(g[i : i + 2] for i in range(0, 16, 2))
            link = (
                f"link/infiniband 00:00:10:29:fe:80:00:00:00:00:00:00:{hw} brd "
                "00:ff:ff:ff:ff:12:40:1b:ff:ff:00:00:00:00:00:00:ff:ff:ff:ff"
            )
            addrs = (
                [f"{node.storage_ip}/{node.storage_prefix}"] if name == storage_if and node.storage_ip else []
            )
            out.append(
                (
                    3 + k,
                    name,
                    "infiniband",
                    True,
                    st.state == "Active",
                    addrs,
                    ctx.fabric.ipoib_mtu(0xFFFF),
                    link,
                    0xFFFF,
                )
            )
            child = children.get(name)
            if child is not None:
                out.append(_child(ctx, node, nic, child, 20 + k, storage_if, hw))
        else:
            link = (
                f"link/ether {g[:2]}:{g[2:4]}:{g[4:6]}:{g[10:12]}:{g[12:14]}:{g[14:16]} brd ff:ff:ff:ff:ff:ff"
            )
            out.append((3 + k, name, "ether", True, st.state == "Active", [], 1500, link, None))
    return out


def _child(ctx: Ctx, node, nic, child, index: int, storage_if: str, hw: str):
    """An IPoIB child: carrier only when its P_Key is in the port's P_Key table
    (the kernel keeps it down otherwise); MTU from the partition's broadcast
    group; the P_Key also shows in its broadcast address (fixture
    ip-link-ipoib/ip-d-link-show-mlx5_ib0.8001-child...)."""
    st = ctx.fabric.status(node, nic)
    table = ctx.fabric.pkeys(node, nic)
    carrier = st.state == "Active" and any(p & 0x7FFF == child.pkey & 0x7FFF for p in table)
    pk = f"{child.pkey:04x}"
    link = (
        f"link/infiniband 00:00:10:2b:fe:80:00:00:00:00:00:00:{hw} brd "
        f"00:ff:ff:ff:ff:12:40:1b:{pk[:2]}:{pk[2:]}:00:00:00:00:00:00:ff:ff:ff:ff"
    )
    addrs = (
        [f"{node.storage_ip}/{node.storage_prefix}"] if child.name == storage_if and node.storage_ip else []
    )
    mtu = ctx.fabric.ipoib_mtu(child.pkey) if child.mode == "datagram" else 65520
    return (
        index,
        child.name,
        "infiniband",
        True,
        carrier,
        addrs,
        mtu,
        link,
        child.pkey,
        child.parent,
        child.mode,
    )


def _details(kind: str, ipoib: list) -> str:
    """What `ip -d` adds (iproute2's layout: two spaces after each IPoIB key)."""
    if kind == "loopback":
        return " promiscuity 0 minmtu 0 maxmtu 0 addrgenmode eui64 numtxqueues 1 numrxqueues 1\n"
    if kind != "infiniband":
        return (
            " promiscuity 0 minmtu 68 maxmtu 9000 addrgenmode eui64 numtxqueues 64 numrxqueues 64 "
            "gso_max_size 65536 gso_max_segs 65535\n"
        )
    pkey = ipoib[0] if ipoib else 0xFFFF
    mode = ipoib[2] if len(ipoib) > 2 else "datagram"
    child = len(ipoib) > 1
    return (
        " promiscuity 0 minmtu 68 maxmtu 65520\n"
        f"    ipoib pkey  0x{pkey:04x} mode  {mode} umcast  0000 addrgenmode {'eui64' if child else 'none'} "
        f"numtxqueues {1 if child else 256} numrxqueues {1 if child else 32} "
        "gso_max_size 65536 gso_max_segs 65535\n"
    )


def _flags(up: bool, carrier: bool, kind: str) -> str:
    if kind == "loopback":
        return "<LOOPBACK,UP,LOWER_UP>"
    base = "BROADCAST,MULTICAST"
    return f"<{base},UP,LOWER_UP>" if carrier else f"<NO-CARRIER,{base},UP>"


def ip(ctx: Ctx, args, io) -> int:
    oneline = "-o" in args or "-oneline" in args
    brief = "-br" in args or "-brief" in args
    details = "-d" in args or "-details" in args
    words = [a for a in args if not a.startswith("-")]
    if not words:
        io.err.write("Usage: ip [ OPTIONS ] OBJECT { COMMAND | help }\n")
        return 255
    obj = words[0]
    rest = [w for w in words[1:] if w not in ("show", "list", "dev")]
    if obj not in ("addr", "address", "a", "link", "l"):
        io.err.write(f'Object "{obj}" is unknown, try "ip help".\n')
        return 255
    ifaces = _interfaces(ctx)
    if rest:
        ifaces = [i for i in ifaces if i[1] == rest[0]]
        if not ifaces:
            io.err.write(f'Device "{rest[0]}" does not exist.\n')
            return 1
    out = []
    for idx, name, kind, up, carrier, addrs, mtu, link, *ipoib in ifaces:
        state = "UNKNOWN" if kind == "loopback" else ("UP" if carrier else "DOWN")
        shown = f"{name}@{ipoib[1]}" if len(ipoib) > 1 else name  # a child: ib4.8200@ib4
        if brief:
            out.append(f"{name:<16} {state:<14} {' '.join(addrs)} \n")
            continue
        if oneline:
            if obj.startswith("l"):
                out.append(
                    f"{idx}: {name}: {_flags(up, carrier, kind)} mtu {mtu} state {state}\\    {link}\n"
                )
            for cidr in addrs:
                net = ipaddress.ip_interface(cidr)
                brd = f" brd {net.network.broadcast_address}" if kind != "loopback" else ""
                scope = "host" if kind == "loopback" else "global"
                out.append(
                    f"{idx}: {name}    inet {cidr}{brd} scope {scope} {name}\\       "
                    "valid_lft forever preferred_lft forever\n"
                )
            continue
        qdisc = "noqueue" if kind == "loopback" else "mq"
        mode = " mode DEFAULT" if obj.startswith("l") else ""  # `ip link` prints the link mode
        out.append(
            f"{idx}: {shown}: {_flags(up, carrier, kind)} mtu {mtu} qdisc {qdisc} state {state}{mode} "
            f"group default qlen {1000 if kind != 'infiniband' else 256}\n    {link}"
        )
        out.append(_details(kind, ipoib) if details else "\n")
        if obj.startswith("a"):
            for cidr in addrs:
                net = ipaddress.ip_interface(cidr)
                brd = f" brd {net.network.broadcast_address}" if kind != "loopback" else ""
                scope = "host" if kind == "loopback" else "global noprefixroute"
                out.append(
                    f"    inet {cidr}{brd} scope {scope} {name}\n"
                    "       valid_lft forever preferred_lft forever\n"
                )
    io.out.write("".join(out))
    return 0


def repolist(ctx: Ctx, args, io) -> int:
    if not args or args[0] != "repolist":
        io.err.write("Error: only 'repolist' is simulated on this node (no package transactions)\n")
        return 1
    repos = []
    for path in ctx.fs.listdir("/etc/yum.repos.d"):
        if not path.endswith(".repo"):
            continue
        text = ctx.fs.read("/etc/yum.repos.d/" + path)
        for m in re.finditer(r"^\[([^\]]+)\]\s*\nname=(.*)$", text, re.M):
            repos.append((m.group(1), m.group(2).strip()))
    io.out.write(f"{'repo id':<38} repo name\n" + "".join(f"{r:<38} {n}\n" for r, n in sorted(repos)))
    return 0


COMMANDS = {"ip": ip, "dnf": repolist, "yum": repolist}
