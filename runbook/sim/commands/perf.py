"""Benchmarks whose numbers follow the node state: nccl-tests (all_reduce_perf and
friends, alone or under mpirun -H) and perftest's ib_write_bw."""

from __future__ import annotations

import asyncio
import re

from .. import linkfaults, pathmodel, perfmodel
from .base import Ctx, modelled_wait
from .jobs import _PIDS

UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
LINE = "-" * 87


def _size(text: str) -> int:
    m = re.fullmatch(r"(\d+)([KMG]?)B?", text.upper())
    if not m:
        raise ValueError(text)
    return int(m.group(1)) * UNITS[m.group(2)]


def _fmt_time(us: float) -> str:
    return f"{us:7.0f}" if us >= 10000 else f"{us:7.1f}" if us >= 100 else f"{us:7.2f}"


def _hca_selected(spec: str, dev: str) -> bool:
    """NCCL_IB_HCA: a leading '=' means exact names, otherwise each entry is a
    prefix (mlx5_1 also selects mlx5_10); '^' excludes; ':PORT' names a port."""
    if not spec:
        return True
    exclude = spec.startswith("^")
    spec = spec.lstrip("^")
    exact = spec.startswith("=")
    names = [e.split(":")[0] for e in spec.lstrip("=").split(",") if e]
    hit = any(dev == n if exact else dev.startswith(n) for n in names)
    return not hit if exclude else hit


def _bootstrap_if(ctx: Ctx, node, env: dict[str, str]) -> tuple[str, str] | None:
    """The interface NCCL's bootstrap picks: NCCL_SOCKET_IFNAME (=exact or
    prefix), otherwise the first ib* interface with an address (NCCL prefers
    IPoIB), otherwise the first other non-loopback one."""
    from .network import _interfaces

    machine = ctx.machine.peer(node.name) or ctx.machine
    ifaces = [
        (name, addrs[0].split("/")[0])
        for _, name, kind, _, _, addrs, *_ in _interfaces(Ctx(ctx.shell, machine))
        if addrs and kind != "loopback"
    ]
    spec = env.get("NCCL_SOCKET_IFNAME", "")
    if spec:
        exact = spec.startswith("=")
        names = [n for n in spec.lstrip("=").split(",") if n]
        chosen = [i for i in ifaces if any(i[0] == n if exact else i[0].startswith(n) for n in names)]
        return chosen[0] if chosen else None
    ib = [i for i in ifaces if i[0].startswith("ib")]
    return (ib or ifaces or [None])[0]


def _nccl_info(ctx: Ctx, nodes, slots, ngpus, env) -> tuple[list[str], str | None]:
    """NCCL_DEBUG=INFO lines as NCCL 2.21 prints them (host:pid:tid [dev] NCCL INFO ...):
    bootstrap interface, the IB HCAs in use and whether GPUDirect RDMA is on, and
    one ring channel per GPU of the first node. Returns (lines, error)."""
    out = []
    for k, n in enumerate(nodes):
        boot = _bootstrap_if(ctx, n, env)
        if boot is None:
            return [], (
                f"{n.name}:{4242}:{4242} [0] NCCL INFO NET/Socket : no socket interface found "
                f"(NCCL_SOCKET_IFNAME={env.get('NCCL_SOCKET_IFNAME', '')})"
            )
        pre = f"{n.name}:{4242}:{4242} [0] NCCL INFO"
        if k == 0:
            out.append(f"{pre} NCCL version 2.21.5+cuda12.4")
        out.append(f"{pre} Bootstrap : Using {boot[0]}:{boot[1]}<0>")
        hcas = [
            x
            for x in n.nics
            if ctx.fabric.status(n, x).state == "Active"
            and ctx.fabric.status(n, x).layer == "InfiniBand"
            and _hca_selected(env.get("NCCL_IB_HCA", ""), x.dev)
        ]
        used = " ".join(f"[{i}]{x.dev}:1/IB" for i, x in enumerate(hcas))
        out.append(f"{pre} NET/IB : Using {used} ; OOB {boot[0]}:{boot[1]}<0>")
        gdr = "nvidia_peermem" in n.modules
        if not gdr:
            out += [
                f"{pre} NET/IB : GPU Direct RDMA Disabled for HCA {i} '{x.dev}'" for i, x in enumerate(hcas)
            ]
        if k == 0 and len(nodes) > 1 and hcas:
            total = ngpus * slots[0]
            for r in range(total):
                peer = total + r
                out.append(
                    f"{n.name}:{4242 + r}:{4260 + r} [{r}] NCCL INFO Channel {r:02d}/0 : {peer}[{r}] -> "
                    f"{r}[{r}] [receive] via NET/IB/{r % len(hcas)}{'/GDRDMA' if gdr else ''}"
                )
    return out, None


def nccl_output(
    ctx: Ctx,
    machines,
    args: list[str],
    name: str,
    slots: list[int] | None = None,
    env: dict[str, str] | None = None,
) -> tuple[str, int]:
    """nccl-tests output; `slots` = MPI processes per machine (each drives -g GPUs);
    `env` = what mpirun -x exported (NCCL_DEBUG, NCCL_SOCKET_IFNAME, NCCL_IB_HCA)."""
    env = (
        env
        if env is not None
        else {k: v for k, v in ctx.shell.vars.items() if k.startswith(("NCCL_", "UCX_"))}
    )
    opts = {"-b": "32M", "-e": "32M", "-f": "2", "-g": "1", "-n": "20", "-w": "5"}
    i = 0
    while i < len(args):
        if args[i] in opts and i + 1 < len(args):
            opts[args[i]] = args[i + 1]
            i += 2
            continue
        m = re.fullmatch(r"(-[befgnw])(\S+)", args[i]) or re.fullmatch(r"--\w+=(\S+)", args[i])
        if m and m.lastindex == 2:
            opts[m.group(1)] = m.group(2)
        i += 1
    try:
        lo, hi, factor, ngpus = _size(opts["-b"]), _size(opts["-e"]), int(opts["-f"]), int(opts["-g"])
    except ValueError as exc:
        return f"Invalid size {exc}\n", 1
    nodes = [m.state for m in machines]
    slots = slots or [1] * len(nodes)
    if any(ngpus * k > len(n.gpus) for n, k in zip(nodes, slots)):
        return (
            f"{nodes[0].name}: Test CUDA failure common.cu:1038 'invalid device ordinal'\n .. {nodes[0].name} pid 4242: Test failure common.cu:1123\n",
            2,
        )
    ranks = ngpus * sum(slots)
    fab = ctx.fabric
    if len(nodes) > 1:
        for n in nodes:
            if not any(
                fab.status(n, x).state == "Active" and fab.status(n, x).layer == "InfiniBand"
                for x in n.nics
                if x.role == "compute"
            ):
                return (
                    f"{n.name}: Test NCCL failure common.cu:1005 'unhandled system error "
                    "(run with NCCL_DEBUG=INFO for details)'\n"
                ), 3
        base = float(ctx.cluster.design.var("nccl_inter_busbw_gbps", 38.0))
        peak = (
            base
            * perfmodel.HEADROOM
            * min(perfmodel.inter_factor(fab, n) * linkfaults.nccl_factor(n) for n in nodes)
        )
    else:
        base = float(ctx.cluster.design.var("nccl_intra_busbw_gbps", 18.5))
        peak = base * perfmodel.HEADROOM * perfmodel.intra_factor(nodes[0])
    correction = 2 * (ranks - 1) / ranks if ranks > 1 else 0.0
    alg_peak = peak / correction if correction else peak
    out = [
        f"# nThread 1 nGpus {ngpus} minBytes {lo} maxBytes {hi} step: {factor}(factor) warmup iters: "
        f"{opts['-w']} iters: {opts['-n']} agg iters: 1 validation: 1 graph: 0",
        "#",
        "# Using devices",
    ]
    rank = 0
    for k, n in enumerate(nodes):
        for proc in range(slots[k]):
            for j in range(ngpus):
                d = proc * ngpus + j
                out.append(
                    f"#  Rank {rank:>2} Group  0 Pid {4242 + proc:>6} on {n.name:>10} device {d:>2} "
                    f"[0000:{n.gpus[d].bus[:5]}] NVIDIA L40S"
                )
                rank += 1
    if env.get("NCCL_DEBUG", "").upper() in ("INFO", "TRACE"):
        info, error = _nccl_info(ctx, nodes, slots, ngpus, env)
        if error:
            return (
                error + f"\n{nodes[0].name}: Test NCCL failure common.cu:1005 'unhandled system error'\n",
                3,
            )
        out += info
    else:
        out.append("NCCL version 2.21.5+cuda12.4")
    out += [
        "#",
        "#                                                              out-of-place                       in-place          ",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ",
    ]
    total, rows = 0.0, 0
    size = max(lo, 4)
    while size <= hi:
        cells = []
        for jitter in (1.0, 0.997):
            us = 15.0 + size / (alg_peak * jitter * 1e3)
            algbw = size / us / 1e3
            busbw = algbw * correction
            total += busbw
            cells.append(f"  {_fmt_time(us)}  {algbw:6.2f}  {busbw:6.2f}  {0:5d}")
        rows += 2
        out.append(f"{size:12d}  {size // 4:12d}  {'float':>8}  {'sum':>6}  {-1:6d}" + "".join(cells))
        size = size * factor if factor > 1 else hi + 1
    out += ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {total / max(rows, 1):g} ", "#"]
    return "\n".join(out) + "\n", 0


async def all_reduce_perf(ctx: Ctx, args, io) -> int:
    text, status = nccl_output(ctx, [ctx.machine], args, "all_reduce_perf")
    await modelled_wait(ctx, 0.05)
    (io.out if status == 0 else io.err).write(text)
    return status


async def mpirun(ctx: Ctx, args, io) -> int:
    hosts, slots, i = [ctx.machine.name], [1], 0
    env: dict[str, str] = {}
    while i < len(args):
        a = args[i]
        if a in ("-H", "--host", "-host") and i + 1 < len(args):
            entries = [h for h in args[i + 1].split(",") if h]
            hosts = [h.split(":")[0] for h in entries]
            slots = [int(h.split(":")[1]) if ":" in h and h.split(":")[1].isdigit() else 1 for h in entries]
            i += 2
            continue
        if a == "-x" and i + 1 < len(args):
            key, eq, value = args[i + 1].partition("=")
            env[key] = value if eq else str(ctx.shell.vars.get(key, ""))
            i += 2
            continue
        if a in ("-np", "-n", "--mca", "-mca", "--map-by", "--bind-to", "-N", "--npernode"):
            i += 3 if a in ("--mca", "-mca") else 2
            continue
        if not a.startswith("-"):
            break
        i += 1
    program, rest = (args[i], args[i + 1 :]) if i < len(args) else ("", [])
    if not program.endswith("_perf"):
        io.err.write(f"mpirun: only nccl-tests programs are simulated (got '{program}')\n")
        return 1
    machines = []
    for h in hosts:
        peer = ctx.machine.peer(h)
        if peer is None or not peer.reachable():
            io.err.write(
                f"ssh: connect to host {h} port 22: Connection refused\n"
                "--------------------------------------------------------------------------\n"
                "ORTE was unable to reliably start one or more daemons.\n"
            )
            return 1
        machines.append(peer)
    text, status = nccl_output(ctx, machines, rest, program, slots, env)
    # a long_job fault's time is the fault's (sim/linkfaults.py), not scaled; the job's own is
    await _ranks_run(ctx, machines, ctx.node.job_seconds or 0.05 * ctx.cluster.time_scale)
    (io.out if status == 0 else io.err).write(text)
    return status


async def _ranks_run(ctx: Ctx, machines, seconds: float) -> None:
    """The job's time. Meanwhile each other node of the job holds the job's
    daemon (ORTE/PRRTE: orted, prted) and its ranks as one process of its own,
    killable there; they end with mpirun, as the daemons abort when it goes, and
    a daemon killed on its node aborts the job (the job's task is cancelled)."""
    job = asyncio.current_task()
    held = []
    for m in machines:
        if m is not ctx.machine and job is not None:
            pid = next(_PIDS)
            m.detached[pid] = job
            held.append((m, pid))
    try:
        await asyncio.sleep(seconds)
    finally:
        for m, pid in held:
            m.detached.pop(pid, None)


WAITING = (
    "\n************************************\n* Waiting for client to connect... *\n"
    "************************************\n"
)


def _perftest_header(dev: str, gbits: bool, layer: str) -> str:
    # perftest prints the title indented with two TABs and four spaces
    # (fixtures ib_write_bw/*duration-server*, and perftest's own source)
    return (
        f"{LINE}\n\t\t    RDMA_Write BW Test\n"
        f" Dual-port       : OFF          Device         : {dev}\n"
        " Number of qps   : 1            Transport type : IB\n"
        " Connection type : RC           Using SRQ      : OFF\n"
        " PCIe relax order: ON\n ibv_wr* API     : ON\n TX depth        : 128\n CQ Moderation   : 1\n"
        " Mtu             : 4096[B]\n"
        f" Link type       : {'IB' if layer == 'InfiniBand' else 'Ethernet'}\n"
        " Max inline data : 0[B]\n rdma_cm QPs     : OFF\n Data ex. method : Ethernet\n"
        f"{LINE}\n"
    )


def _perftest_result(
    gbits_value: float, gbits: bool, size: int, lid: int, rlid: int, duration: float | None = None
) -> str:
    """perftest's REPORT_FMT (" %-7lu    %-10lu       %-7.2lf            %-7.2lf\t\t   %-7.6lf",
    its columns as in ib_write_bw/DGX-*); with -D (duration) the peak is not
    measured and printed as 0.00, and #iterations is the number completed."""
    unit = "Gb/sec" if gbits else "MB/sec"
    value = gbits_value if gbits else gbits_value * 1e9 / 8 / 1048576
    rate = gbits_value * 1e9 / 8 / size / 1e6
    if duration:
        # -D: the peak is not measured (0.00) and the average follows it after one
        # space, the rate at column 61 (real capture ib_write_bw/*duration-server*)
        iters = int(rate * 1e6 * duration)
        row = f" {size:<7}    {iters:<10}       0.00 {value:.2f}"
        row = f"{row:<61}{rate:.6f}"
    else:
        row = f" {size:<7}    {5000:<10}       {value * 1.0003:<7.2f}            {value:<7.2f}\t\t   {rate:<7.6f}"
    return (
        f" local address: LID {lid:#06x} QPN 0x0126 PSN 0x5a3f21 RKey 0x1fefef VAddr 0x007f2a1c5f0000\n"
        f" remote address: LID {rlid:#06x} QPN 0x0127 PSN 0x8c1d2e RKey 0x1ff0f0 VAddr 0x007f9d3c460000\n"
        f"{LINE}\n #bytes     #iterations    BW peak[{unit}]    BW average[{unit}]   MsgRate[Mpps]\n"
        f"{row}\n{LINE}\n"
    )


async def ib_write_bw(ctx: Ctx, args, io) -> int:
    dev, size, gbits, peer_name, duration, tcp_port = None, 65536, False, None, None, 18515
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-d", "--ib-dev") and i + 1 < len(args):
            dev, i = args[i + 1], i + 2
            continue
        if a in ("-s", "--size") and i + 1 < len(args):
            size, i = int(args[i + 1]), i + 2
            continue
        if a in ("-D", "--duration") and i + 1 < len(args):
            duration, i = float(args[i + 1]), i + 2
            continue
        if a in ("-p", "--port") and i + 1 < len(args) and args[i + 1].isdigit():
            tcp_port, i = int(args[i + 1]), i + 2
            continue
        if a in ("-i", "--ib-port", "-x", "--gid-index", "-q", "--qp", "-n", "--iters", "-m", "--mtu"):
            i += 2
            continue
        if a == "--report_gbits":
            gbits = True
        elif not a.startswith("-"):
            peer_name = a
        i += 1
    node = ctx.node
    nic = node.nic(dev) if dev else node.nics[0]
    if nic is None:
        io.err.write(f" IB device {dev} not found\n Unable to find the Infiniband/RoCE device\n")
        return 1
    st = ctx.fabric.status(node, nic)
    if st.state != "Active":
        io.err.write(
            f" Port number 1 state is {'Init' if st.state == 'Initializing' else st.state}\n"
            " Couldn't set the link layer\n Couldn't get context for the device\n"
        )
        return 1
    if peer_name is None:  # server: wait for a client to pair with
        fut = asyncio.get_running_loop().create_future()
        servers = ctx.machine.rendezvous.setdefault("ib_write_bw", [])
        # perftest prints its banner before it binds the port (src/write_bw.c: the banner,
        # then establish_connection -> ethernet_server_connect in perftest_communication.c),
        # so a port still held by an old server shows as a banner followed by this error
        io.out.write(WAITING)
        if any(not f.done() and f.port == tcp_port for f in servers):
            io.err.write(f"Couldn't listen to port {tcp_port}\n Unable to init the socket connection\n")
            return 1
        io.out.write(_perftest_header(nic.dev, gbits, st.layer))
        fut.dev = nic.dev  # the client's peer port (across rails it is not the client's device name)
        fut.port = tcp_port  # what `fuser -k PORT/tcp` finds it by (commands/fuser.py)
        fut.numa = perfmodel.numa_factor(nic)  # the server's buffers off the NIC's node slow the pair
        servers.append(fut)
        try:
            got = await asyncio.wait_for(fut, 120)
        except TimeoutError:
            io.err.write(" Timeout waiting for a client\n")
            return 1
        finally:
            if fut in servers:
                servers.remove(fut)
        if got is None:  # killed (fuser -k): the shell's "Killed", status 128+9
            return 137
        value, rlid = got
        io.out.write(_perftest_result(value, gbits, size, st.lid, rlid, duration))
        return 0
    peer = ctx.machine.peer(peer_name)
    if peer is None or not peer.reachable():
        io.err.write(
            f" Couldn't connect to {peer_name}:18515\nUnable to open file descriptor for socket connection"
            " Unable to init the socket connection\n"
        )
        return 1
    # The peer's port: the one the waiting server uses, else the same device name.
    waiting = [f for f in peer.rendezvous.get("ib_write_bw") or [] if not f.done() and f.port == tcp_port]
    pnic = (
        (peer.state.nic(waiting[0].dev) if waiting else None) or peer.state.nic(nic.dev) or peer.state.nics[0]
    )
    pst = ctx.fabric.status(peer.state, pnic)
    if st.layer != "InfiniBand" or pst.layer != "InfiniBand" or pst.state != "Active":
        io.err.write(" Failed to modify QP 0x0126 to RTR\n Unable to Connect the HCA's through the link\n")
        return 1
    value = pathmodel.pair_gbits(ctx.fabric, node, nic, peer.state, pnic)
    if not waiting:  # nobody listens on the port yet: the TCP connect is refused
        io.err.write(
            f"Couldn't connect to {peer_name}:{tcp_port}\n"
            "Unable to open file descriptor for socket connection Unable to init the socket connection\n"
        )
        return 1
    value *= min(perfmodel.numa_factor(nic), getattr(waiting[0], "numa", 1.0))  # either end off its node
    # across leaves, the flow shares the uplinks with the others running (pathmodel.py)
    asked = value
    value = pathmodel.flow_starts(ctx.fabric, nic, pnic, asked)
    try:
        waiting[0].set_result((value, st.lid))
        io.out.write(_perftest_header(nic.dev, gbits, st.layer))
        await modelled_wait(ctx, 0.05)
    finally:
        pathmodel.flow_ends(ctx.fabric, nic, pnic, asked)
    io.out.write(_perftest_result(value, gbits, size, st.lid, pst.lid, duration))
    return 0


COMMANDS = {
    "all_reduce_perf": all_reduce_perf,
    "all_gather_perf": all_reduce_perf,
    "mpirun": mpirun,
    "ib_write_bw": ib_write_bw,
}
ONLY_ON = {
    "all_reduce_perf": lambda m: bool(m.state.gpus),
    "all_gather_perf": lambda m: bool(m.state.gpus),
    "mpirun": lambda m: bool(m.state.gpus),
}
