"""OS tools: hostname uname whoami id date uptime nproc free chronyc numactl dmidecode."""

from __future__ import annotations

import time

from ..cpus import format_cpulist
from .base import Ctx, split_opts
from .dmidecode import dmidecode


def hostname(ctx: Ctx, args, io) -> int:
    io.out.write(ctx.node.name + "\n")
    return 0


def uname(ctx: Ctx, args, io) -> int:
    opts, _ = split_opts(args)
    kernel = ctx.node.versions["kernel"]
    if opts.get("a"):
        io.out.write(
            f"Linux {ctx.node.name} {kernel} #1 SMP PREEMPT_DYNAMIC Wed Mar 13 17:12:19 UTC 2024"
            " x86_64 x86_64 x86_64 GNU/Linux\n"
        )
        return 0
    parts = []
    for flag, value in (
        ("s", "Linux"),
        ("n", ctx.node.name),
        ("r", kernel),
        ("m", "x86_64"),
        ("o", "GNU/Linux"),
    ):
        if opts.get(flag) or opts.get("--kernel-release") and flag == "r":
            parts.append(value)
    io.out.write(" ".join(parts or ["Linux"]) + "\n")
    return 0


def now(ctx: Ctx) -> float:
    """The node's wall clock: real time plus its skew."""
    return time.time() + ctx.node.clock_offset_s


def date(ctx: Ctx, args, io) -> int:
    fmt = next((a[1:] for a in args if a.startswith("+")), "%a %b %e %H:%M:%S %Z %Y")
    t = time.gmtime(now(ctx))
    fmt = fmt.replace("%s", str(int(now(ctx)))).replace("%N", f"{int(now(ctx) % 1 * 1e9):09d}")
    io.out.write(time.strftime(fmt.replace("%Z", "UTC"), t) + "\n")
    return 0


def uptime(ctx: Ctx, args, io) -> int:
    up = max(0, int(time.time() - ctx.node.booted_at))
    clock = time.strftime("%H:%M:%S", time.gmtime(now(ctx)))
    mins = up // 60
    io.out.write(f" {clock} up {mins // 60}:{mins % 60:02d},  1 user,  load average: 0.08, 0.03, 0.01\n")
    return 0


def nproc(ctx: Ctx, args, io) -> int:
    io.out.write(f"{ctx.node.ncpus}\n")
    return 0


def free(ctx: Ctx, args, io) -> int:
    opts, _ = split_opts(args)
    total_mb = ctx.node.memory_gb() * 1024 * 985 // 1000
    div = 1024 if opts.get("g") else 1
    t, u = total_mb // div, total_mb // 50 // div
    f = t - u - t // 100
    io.out.write("               total        used        free      shared  buff/cache   available\n")
    io.out.write(f"Mem:    {t:>12}{u:>12}{f:>12}{0:>12}{t // 100:>12}{t - u:>12}\n")
    io.out.write(f"Swap:   {0:>12}{0:>12}{0:>12}\n")
    return 0


def chronyc(ctx: Ctx, args, io) -> int:
    if not args or args[0] != "tracking":
        if args and args[0] == "sources":
            site = ctx.cluster.design.var("site", "site")
            io.out.write(
                "MS Name/IP address         Stratum Poll Reach LastRx Last sample\n"
                "===============================================================================\n"
                f"^* ntp1.{site}.internal          2   6   377    21    +12us[  +15us] +/-  310us\n"
                f"^+ ntp2.{site}.internal          2   6   377    20    -31us[  -28us] +/-  402us\n"
            )
            return 0
        io.err.write("Unrecognized command\n")
        return 1
    off = ctx.node.clock_offset_s
    site = ctx.cluster.design.var("site", "site")
    ref = time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(now(ctx) - 37))
    io.out.write(
        f"Reference ID    : 0A000101 (ntp1.{site}.internal)\n"
        "Stratum         : 3\n"
        f"Ref time (UTC)  : {ref}\n"
        f"System time     : {abs(off):.9f} seconds {'fast' if off >= 0 else 'slow'} of NTP time\n"
        f"Last offset     : {off * 0.8:+.9f} seconds\n"
        f"RMS offset      : {abs(off) * 1.3:.9f} seconds\n"
        "Frequency       : 12.345 ppm slow\n"
        "Residual freq   : -0.001 ppm\n"
        "Skew            : 0.034 ppm\n"
        "Root delay      : 0.000345678 seconds\n"
        "Root dispersion : 0.000123456 seconds\n"
        "Update interval : 64.2 seconds\n"
        "Leap status     : Normal\n"
    )
    return 0


def numactl(ctx: Ctx, args, io) -> int:
    from .numabind import run_bound, wants_binding

    if wants_binding(args):
        return run_bound(ctx, args, io)  # awaited by the shell
    if not args or args[0] not in ("-H", "--hardware"):
        if args and args[0] in ("-s", "--show"):
            io.out.write(
                f"policy: default\npreferred node: current\nphyscpubind: "
                f"{' '.join(str(c) for c in range(ctx.node.ncpus))}\n"
            )
            return 0
        io.err.write("usage: numactl [--hardware | --show] (other forms are not simulated)\n")
        return 1
    node = ctx.node
    out = [f"available: {node.sockets} nodes (0-{node.sockets - 1})"]
    for n in range(node.sockets):
        size = node.memory_gb(n) * 1024 * 985 // 1000
        out += [
            f"node {n} cpus: {' '.join(str(c) for c in node.numa_cpus(n))}",
            f"node {n} size: {size} MB",
            f"node {n} free: {size * 97 // 100} MB",
        ]
    out.append("node distances:")
    out.append("node" + "".join(f"{n:>4}" for n in range(node.sockets)))
    for a in range(node.sockets):
        out.append(f"{a:>3}:" + "".join(f"{10 if a == b else 20:>4}" for b in range(node.sockets)))
    io.out.write("\n".join(out) + "\n")
    return 0


def lscpu(ctx: Ctx, args, io) -> int:
    node = ctx.node
    io.out.write(
        f"Architecture:            x86_64\nCPU(s):                  {node.ncpus}\n"
        f"Thread(s) per core:      2\nCore(s) per socket:      {node.cores_per_socket}\n"
        f"Socket(s):               {node.sockets}\nNUMA node(s):            {node.sockets}\n"
    )
    for n in range(node.sockets):
        io.out.write(f"NUMA node{n} CPU(s):       {format_cpulist(node.numa_cpus(n))}\n")
    return 0


def _id_text(args) -> str:
    """The lab logs in as root: `id`, `id -u`, `id -un`."""
    flags = "".join(a.lstrip("-") for a in args if a.startswith("-"))
    if "u" in flags or "g" in flags:
        return ("root" if "n" in flags else "0") + "\n"
    return "uid=0(root) gid=0(root) groups=0(root)\n"


COMMANDS = {
    "hostname": hostname,
    "uname": uname,
    "date": date,
    "uptime": uptime,
    "nproc": nproc,
    "free": free,
    "chronyc": chronyc,
    "numactl": numactl,
    "dmidecode": dmidecode,
    "lscpu": lscpu,
    "whoami": lambda c, a, i: (i.out.write("root\n"), 0)[1],
    "id": lambda c, a, i: (i.out.write(_id_text(a)), 0)[1],
}
