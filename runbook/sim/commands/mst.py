"""MFT and OFED identity tools: mst start|stop|status [-v], ofed_info, ibdev2netdev."""

from __future__ import annotations

from ..hardware import IB, Nic, NodeState
from .base import Ctx


def mst_device(node: NodeState, nic: Nic) -> str:
    """/dev/mst name of a function: one pciconf per card, `.1` for a card's second function."""
    return f"/dev/mst/{node.hca(nic).mst_chip}_pciconf{nic.card}" + (".1" if nic.port_on_card > 1 else "")


def netdev_name(node: NodeState, nic: Nic) -> str:
    """IPoIB name in IB mode; the Ethernet name the kernel gives the port in ETH mode."""
    if node.link_type(nic) == IB:
        return nic.netdev
    return f"enp{int(nic.bus[:2], 16)}s0f{nic.bus[-1]}np0"


def _modules(started: bool) -> str:
    return "MST modules:\n------------\n    MST PCI module is not loaded\n" + (
        "    MST PCI configuration module loaded\n"
        if started
        else "    MST PCI configuration module is not loaded\n"
    )


def mst(ctx: Ctx, args, io) -> int:
    node = ctx.node
    verb = args[0] if args else ""
    if verb == "start":
        io.out.write(
            "Starting MST (Mellanox Software Tools) driver set\n"
            "Loading MST PCI module - Success\n"
            "Loading MST PCI configuration module - Success\n"
            "Create devices\n"
            "Unloading MST PCI module (unused) - Success\n"
        )
        node.mst_started = True
        ctx.machine.changed()
        return 0
    if verb == "stop":
        io.out.write(
            "Stopping MST (Mellanox Software Tools) driver set\n"
            "Unloading MST PCI configuration module - Success\n"
        )
        node.mst_started = False
        ctx.machine.changed()
        return 0
    if verb != "status":
        io.err.write("Usage: mst start|stop|restart|status [-v]\n")
        return 1
    out = _modules(node.mst_started)
    if "-v" in args[1:]:
        out += "PCI devices:\n------------\n"
        out += f"{'DEVICE_TYPE':<24}{'MST':<30}{'PCI':<10}{'RDMA':<16}{'NET':<26}NUMA  \n"
        for nic in reversed(node.nics):
            dev = mst_device(node, nic) if node.mst_started else "NA"
            out += (
                f"{node.hca(nic).mst_type + '(rev:0)':<24}{dev:<30}{nic.bus:<10}{nic.dev:<16}"
                f"{'net-' + netdev_name(node, nic):<26}{nic.numa}  \n"
            )
        io.out.write(out)
        return 0
    out += "\nMST devices:\n------------\n"
    if not node.mst_started:
        out += (
            "No MST devices were found nor MST modules were loaded.\n"
            "You may need to run 'mst start' to load MST modules.\n"
        )
    else:
        for nic in node.nics:
            if nic.port_on_card > 1:
                continue
            out += (
                f"{mst_device(node, nic):<33}- PCI configuration cycles access.\n"
                f"{'':35}domain:bus:dev.fn=0000:{nic.bus} addr.reg=88 data.reg=92 cr_bar.gw_offset=-1\n"
                f"{'':35}Chip revision is: 00\n"
            )
    io.out.write(out)
    return 0


def ofed_info(ctx: Ctx, args, io) -> int:
    ofed = ctx.node.versions["ofed"]
    if "-s" in args:
        io.out.write(f"{ofed}:\n")
        return 0
    version = ofed.split("-", 1)[1] if "-" in ofed else ofed
    if "-n" in args:
        io.out.write(version + "\n")
        return 0
    short = version.rsplit(".", 1)[0]
    io.out.write(
        f"{ofed} (OFED-{short}):\n\nclusterkit:\nmlnx_ofed_clusterkit/clusterkit-1.11.442-1.2310055.src.rpm\n\n"
        f"mlnx-ofa_kernel:\nmlnx_ofed_mlnx-ofa_kernel/mlnx-ofa_kernel-{short}.src.rpm\n\n"
        f"rdma-core:\nmlnx_ofed/rdma-core-2307mlnx47-1.2310119.src.rpm\n"
    )
    return 0


def ibdev2netdev(ctx: Ctx, args, io) -> int:
    """`ibdev2netdev [-v]`; -v leads with the PCI address and names the card, as
    the real script prints it (e.g. "0000:01:00.0 mlx5_0 (MT4123 - MCX653105A-HDAT)
    ConnectX-6 VPI adapter card, ... fw 20.28.1002 port 1 (ACTIVE) ==> p5p1 (Up)",
    a down port "(DOWN )")."""
    node = ctx.node
    verbose = "-v" in args
    for nic in node.nics:
        st = ctx.fabric.status(node, nic)
        up = "Up" if st.state == "Active" else "Down"
        if verbose:
            card, model = node.card_of(nic), node.hca(nic)
            port = {"Active": "ACTIVE", "Initializing": "INIT", "Down": "DOWN "}[st.state]
            io.out.write(
                f"0000:{nic.bus} {nic.dev} ({model.ca_type} - {card.part}) "
                f"{model.parts[card.ports][2]} fw {node.firmware(nic)} port 1 ({port}) ==> "
                f"{netdev_name(node, nic)} ({up})\n"
            )
            continue
        io.out.write(f"{nic.dev} port 1 ==> {netdev_name(node, nic)} ({up})\n")
    return 0


COMMANDS = {"mst": mst, "ofed_info": ofed_info, "ibdev2netdev": ibdev2netdev}
