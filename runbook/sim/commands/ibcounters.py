"""Port error counters: `ibqueryerrors` over the whole fabric and `perfquery`
of one port, in the layouts infiniband-diags prints (fixtures/real-outputs/
ibqueryerrors/, perfquery/; rdma-core infiniband-diags ibqueryerrors.c and
perfquery.c):

- ibqueryerrors: a switch's block is `Errors for 0x<guid> "<desc>"` with a
  `port ALL:` line (switches answer AllPortSelect) then each port; a CA's block
  is `Errors for "<desc>"` with its port lines only. Without a thresholds file
  every non-zero error counter is reported. `-r` (--report-port) adds the
  "Link info:" line of each port: its link and the node at the other end.
- perfquery [-x] [-C DEV -P PORT] [LID [PORT]]: "# Port counters: Lid N port N
  (CapMask: 0x..)" then the dotted PortCounters fields.

A marginal cable (linkfaults.cable_ber) counts on both ends of its link."""

from __future__ import annotations

from .. import ibformat, linkfaults
from .base import Ctx, split_opts
from .ibfabric import SWITCH_SPEED, _can_discover

# PortCounters CapMask of a ConnectX HCA and of a Quantum switch port
# (AllPortSelect 0x100 on switches: one query answers for every port)
CA_CAPMASK, SWITCH_CAPMASK = 0x5A00, 0x5B00


def _bracketed(counters: dict[str, int]) -> str:
    return "".join(f" [{k} == {v}]" for k, v in counters.items() if v)


def _link_str(width: str, speed: str) -> str:
    return f"({width:>3} {speed:>18} {'Active':>6}/{'LinkUp':>8})"


def _speed(fab, kind, nic, sw, peer) -> tuple[str, str]:
    if nic is not None:
        return ibformat.link_width(nic.rate), ibformat.lane_speed(nic.rate)
    if peer[0] == "ca":
        return ibformat.link_width(peer[2].rate), ibformat.lane_speed(peer[2].rate)
    model = "MQM8700" if "MQM8700" in (sw.desc + peer[1].desc) else "MQM9700"
    return SWITCH_SPEED[model][0], SWITCH_SPEED[model][1]


def _link_info(fab, kind, node_name, nic, sw, port, peer) -> str:
    width, speed = _speed(fab, kind, nic, sw, peer)
    lid = fab.lid_of.get((node_name, nic.dev), 0) if nic is not None else sw.lid
    if peer[0] == "ca":
        pnode, pnic = peer[1], peer[2]
        remote = (
            f"0x{pnic.guid:016x} {fab.lid_of.get((pnode.name, pnic.dev), 0):>6} {1:>4}[  ] "
            f'"{fab.node_desc(pnode.name, pnic.dev)}" ( )'
        )
    else:
        other, oport = peer[1], peer[2]
        remote = f'0x{other.guid:016x} {other.lid:>6} {oport:>4}[  ] "{other.desc}" ( )'
    return f"       Link info: {lid:>6}{port:>4}[  ] =={_link_str(width, speed)}==>  {remote}"


def ibqueryerrors(ctx: Ctx, args, io) -> int:
    if not _can_discover(ctx, "ibqueryerrors", io):
        return 1
    opts, _ = split_opts(args, "sGSDo")
    report_port = bool(opts.get("r") or opts.get("--report-port"))
    fab = ctx.fabric
    nodes_checked = ports_checked = 0
    bad_nodes = bad_ports = 0
    blocks: list[str] = []
    ca_rows: dict[tuple[str, str], list] = {}
    sw_rows: dict[str, list] = {}
    for kind, name, nic, sw, port, marginal, peer in linkfaults.fabric_ports(ctx.cluster):
        row = (port, linkfaults.port_errors(marginal), _link_info(fab, kind, name, nic, sw, port, peer))
        if kind == "ca":
            ca_rows.setdefault((name, nic.dev), []).append((nic, row))
        else:
            sw_rows.setdefault(name, []).append(row)
    for (name, dev), rows in ca_rows.items():
        nodes_checked += 1
        lines = []
        for nic, (port, counters, info) in rows:
            ports_checked += 1
            if any(counters.values()):
                bad_ports += 1
                lines.append(f"   GUID 0x{nic.guid:x} port {port}:{_bracketed(counters)}")
                if report_port:
                    lines.append(info)
        if lines:
            bad_nodes += 1
            blocks.append(f'Errors for "{fab.node_desc(name, dev)}"\n' + "\n".join(lines))
    for sw in fab.switches.values():
        nodes_checked += 1
        rows = sw_rows.get(sw.name, [])
        bad = [(p, c, i) for p, c, i in rows if any(c.values())]
        if not bad:
            ports_checked += sw.nports
            continue
        bad_nodes += 1
        total: dict[str, int] = {}
        for _p, counters, _i in bad:
            for k, v in counters.items():
                total[k] = total.get(k, 0) + v
        lines = [
            f'Errors for 0x{sw.guid:x} "{sw.desc}"',
            f"   GUID 0x{sw.guid:x} port ALL:{_bracketed(total)}",
        ]
        for port, counters, info in bad:
            bad_ports += 1
            lines.append(f"   GUID 0x{sw.guid:x} port {port}:{_bracketed(counters)}")
            if report_port:
                lines.append(info)
        ports_checked += sw.nports
        blocks.append("\n".join(lines))
    out = "".join(b + "\n" for b in blocks)
    out += (
        f"\n## Summary: {nodes_checked} nodes checked, {bad_nodes} bad nodes found\n"
        f"##          {ports_checked} ports checked, {bad_ports} ports have errors beyond threshold\n"
    )
    io.out.write(out)
    return 0


# ---- perfquery --------------------------------------------------------------
# (name, printed as hex) in the order libibmad dumps PortCounters
_FIELDS = (
    ("PortSelect", False),
    ("CounterSelect", True),
    ("SymbolErrorCounter", False),
    ("LinkErrorRecoveryCounter", False),
    ("LinkDownedCounter", False),
    ("PortRcvErrors", False),
    ("PortRcvRemotePhysicalErrors", False),
    ("PortRcvSwitchRelayErrors", False),
    ("PortXmitDiscards", False),
    ("PortXmitConstraintErrors", False),
    ("PortRcvConstraintErrors", False),
    ("CounterSelect2", True),
    ("LocalLinkIntegrityErrors", False),
    ("ExcessiveBufferOverrunErrors", False),
    ("VL15Dropped", False),
    ("PortXmitData", False),
    ("PortRcvData", False),
    ("PortXmitPkts", False),
    ("PortRcvPkts", False),
    ("PortXmitWait", False),
)
_EXT_FIELDS = (
    "PortSelect",
    "CounterSelect",
    "PortXmitData",
    "PortRcvData",
    "PortXmitPkts",
    "PortRcvPkts",
    "PortUnicastXmitPkts",
    "PortUnicastRcvPkts",
    "PortMulticastXmitPkts",
    "PortMulticastRcvPkts",
)


def _dotted(name: str, value: str) -> str:
    return f"{(name + ':').ljust(33, '.')}{value}"


def _traffic(guid: int, port: int) -> dict[str, int]:
    """Data counters that look like a node that has carried traffic (stable per port)."""
    seed = (guid * 2654435761 + port * 40503) % 1000003
    pkts = 10_000_000 + seed * 37
    return {
        "PortXmitData": pkts * 1024,
        "PortRcvData": pkts * 1020,
        "PortXmitPkts": pkts,
        "PortRcvPkts": pkts - seed,
        "PortXmitWait": seed * 3,
    }


def _target(ctx: Ctx, opts, rest) -> tuple[int, int, int, dict[str, int], int] | str:
    """(lid, port, guid, error counters, capmask) of the queried port, or an error text."""
    fab = ctx.fabric
    if not rest:
        dev = opts.get("C")
        nics = [n for n in ctx.node.nics if dev in (None, True) or n.dev == dev]
        nic = next((n for n in nics if fab.status(ctx.node, n).state == "Active"), None)
        if nic is None:
            return f"ibwarn: [{4000 + ctx.node.index}] mad_rpc_open_port: can't open UMAD port ({dev or '(null)'}:0)"
        return (
            fab.lid_of[(ctx.node.name, nic.dev)],
            1,
            nic.guid,
            linkfaults.port_errors(nic.marginal),
            CA_CAPMASK,
        )
    try:
        lid = int(rest[0], 0)
        port = int(rest[1], 0) if len(rest) > 1 else 1
    except ValueError:
        return f"perfquery: iberror: failed: can't resolve destination port {rest[0]}"
    for kind, name, nic, sw, p, marginal, _peer in linkfaults.fabric_ports(ctx.cluster):
        if kind == "ca" and fab.lid_of.get((name, nic.dev)) == lid and fab.sm_lid():
            return lid, p, nic.guid, linkfaults.port_errors(marginal), CA_CAPMASK
        if kind == "switch" and sw.lid == lid and p == port and fab.sm_lid():
            return lid, p, sw.guid, linkfaults.port_errors(marginal), SWITCH_CAPMASK
    if any(sw.lid == lid for sw in fab.switches.values()) and fab.sm_lid():
        return lid, port, 0, linkfaults.port_errors(False), SWITCH_CAPMASK  # a port without link
    return f"ibwarn: [{4000 + ctx.node.index}] mad_rpc: _do_madrpc failed; dport (Lid {lid})\nperfquery: iberror: failed: perfquery"


def perfquery(ctx: Ctx, args, io) -> int:
    opts, rest = split_opts(args, "CPt")
    if not _can_discover(ctx, "perfquery", io):
        return 255
    found = _target(ctx, opts, rest)
    if isinstance(found, str):
        io.err.write(found + "\n")
        return 255
    lid, port, guid, errors, capmask = found
    values: dict[str, int] = {**errors, **_traffic(guid, port), "PortSelect": port}
    if opts.get("x") or opts.get("--extended"):
        lines = [
            f"# Port extended counters: Lid {lid} port {port} (CapMask: 0x{capmask:02X} CapMask2: 0x0000000)"
        ]
        values.update(
            PortUnicastXmitPkts=values["PortXmitPkts"] - 1000,
            PortUnicastRcvPkts=values["PortRcvPkts"] - 1000,
            PortMulticastXmitPkts=1000,
            PortMulticastRcvPkts=1000,
        )
        for name in _EXT_FIELDS:
            lines.append(_dotted(name, "0x0000" if name == "CounterSelect" else str(values[name])))
    else:
        lines = [f"# Port counters: Lid {lid} port {port} (CapMask: 0x{capmask:02X})"]
        for name, hexa in _FIELDS:
            if hexa:
                lines.append(_dotted(name, "0x0000" if name == "CounterSelect" else "0x00"))
            else:
                lines.append(_dotted(name, str(values.get(name, 0))))
    io.out.write("\n".join(lines) + "\n")
    return 0


COMMANDS = {"ibqueryerrors": ibqueryerrors, "perfquery": perfquery}
