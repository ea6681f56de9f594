"""`ibqueryerrors`: port error counters over the whole fabric, as
infiniband-diags prints them (layout: fixtures/real-outputs/ibqueryerrors/):
an "Errors for <guid> "<node description>"" block per node with a port over
threshold ("port ALL" then each port), then the "## Summary" footer. A marginal
cable (linkfaults.cable_ber) shows on both ends: the HCA port and the leaf
port it is cabled to."""

from __future__ import annotations

from .. import linkfaults
from .base import Ctx
from .ibfabric import _can_discover


def _counters() -> str:
    return (
        f"[SymbolErrorCounter == {linkfaults.BER_SYMBOL_ERRORS}] "
        f"[LinkErrorRecoveryCounter == {linkfaults.BER_RECOVERIES}]"
    )


def ibqueryerrors(ctx: Ctx, args, io) -> int:
    if not _can_discover(ctx, "ibqueryerrors", io):
        return 1
    fab = ctx.fabric
    blocks: list[str] = []
    nodes = ports = bad_nodes = bad_ports = 0
    switch_errors: dict[str, list[int]] = {}
    for node in ctx.cluster.nodes.values():
        bad = linkfaults.ber_devs(node)
        for nic in node.nics:
            if not fab.ib_link(node, nic):
                continue
            nodes += 1
            ports += 1
            if nic.dev in bad:
                bad_nodes += 1
                bad_ports += 1
                g = f"{nic.guid:#x}"
                blocks.append(
                    f'Errors for {g} "{fab.node_desc(node.name, nic.dev)}"\n'
                    f"   GUID {g} port ALL: {_counters()}\n   GUID {g} port 1: {_counters()}"
                )
                switch_errors.setdefault(nic.cable[0], []).append(int(nic.cable[1]))
    for sw in fab.switches.values():
        nodes += 1
        ports += len(sw.peers)
        if sw.name in switch_errors:
            bad_nodes += 1
            g = f"{sw.guid:#x}"
            lines = [f'Errors for {g} "{sw.desc}"', f"   GUID {g} port ALL: {_counters()}"]
            for port in sorted(switch_errors[sw.name]):
                bad_ports += 1
                lines.append(f"   GUID {g} port {port}: {_counters()}")
            blocks.append("\n".join(lines))
    out = "\n".join(blocks) + ("\n\n" if blocks else "")
    out += (
        f"## Summary: {nodes} nodes checked, {bad_nodes} bad nodes found\n"
        f"##          {ports} ports checked, {bad_ports} ports have errors beyond threshold\n"
    )
    io.out.write(out)
    return 0


COMMANDS = {"ibqueryerrors": ibqueryerrors}
