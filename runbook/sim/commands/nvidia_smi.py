"""nvidia-smi: the default table (driver 550 layout), -L, --query-gpu=... --format=csv[,noheader][,nounits],
-q (see nvidia_smi_q.py) and `topo -m` (see nvtopo.py)."""

from __future__ import annotations

import time

from .base import Ctx
from .nvidia_smi_q import query as detailed_query
from .nvsmi_q import health_fields, settings
from .nvtopo import topo_matrix

SEP = "+-----------------------------------------+------------------------+----------------------+"
MEM_TOTAL = 46068


def _idle(gpu) -> tuple[str, str, str]:
    return f"{29 + gpu.index % 5}C", "P8", f"{31 + gpu.index % 4}W"


def table(ctx: Ctx) -> str:
    node = ctx.node
    v = node.versions
    stamp = time.strftime("%a %b %d %H:%M:%S %Y", time.localtime())
    lines = [
        stamp,
        "+-----------------------------------------------------------------------------------------+",
        f"| NVIDIA-SMI {v['driver']:<23}Driver Version: {v['driver']:<15}CUDA Version: {v['cuda']:<9}|",
        "|-----------------------------------------+------------------------+----------------------+",
        "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
        "|                                         |                        |               MIG M. |",
        "|=========================================+========================+======================|",
    ]
    for gpu in node.gpus:
        temp, perf, power = _idle(gpu)
        busid = f"00000000:{gpu.bus.upper()}"
        health = node.platform.gpus[gpu.index]
        pm, cap = "On" if health.persistence else "Off", f"{health.power_limit_w:.0f}W"
        lines.append(
            f"|{gpu.index:>4}  {'NVIDIA L40S':<29}{pm:>4}  |{busid:>19}{'Off':>4} |"
            f"{health.dram_uncorrectable:>21} |"
        )
        lines.append(
            f"|{'N/A':>4}{temp:>6}{perf:>6}{power:>16} / {cap:>5} |{'1MiB':>11} / {f'{MEM_TOTAL}MiB':>9} |"
            f"{'0%':>8}{'Default':>13} |"
        )
        lines.append(f"|{'':41}|{'':24}|{'N/A':>21} |")
        lines.append(SEP)
    lines += [
        " " * 89,
        "+-----------------------------------------------------------------------------------------+",
        "| Processes:                                                                              |",
        "|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |",
        "|        ID   ID                                                               Usage      |",
        "|=========================================================================================|",
        "|  No running processes found                                                             |",
        "+-----------------------------------------------------------------------------------------+",
    ]
    return "\n".join(lines) + "\n"


# field -> (header unit, value function)
def _fields(ctx: Ctx):
    node = ctx.node
    v = node.versions
    gen = {"2.5GT/s": "1", "5GT/s": "2", "8GT/s": "3", "16GT/s": "4", "32GT/s": "5"}
    return {
        "index": ("", lambda g: str(g.index)),
        "name": ("", lambda g: "NVIDIA L40S"),
        "gpu_name": ("", lambda g: "NVIDIA L40S"),
        "uuid": ("", lambda g: g.uuid),
        "gpu_uuid": ("", lambda g: g.uuid),
        "serial": ("", lambda g: g.serial),
        "pci.bus_id": ("", lambda g: f"00000000:{g.bus.upper()}"),
        "gpu_bus_id": ("", lambda g: f"00000000:{g.bus.upper()}"),
        "driver_version": ("", lambda g: v["driver"]),
        "vbios_version": ("", lambda g: "95.02.66.00.02"),
        "compute_cap": ("", lambda g: "8.9"),
        "persistence_mode": ("", lambda g: "Enabled"),
        "pstate": ("", lambda g: "P0" if g.link.busy else "P8"),
        "memory.total": ("MiB", lambda g: f"{MEM_TOTAL}"),
        "memory.used": ("MiB", lambda g: "1"),
        "memory.free": ("MiB", lambda g: f"{MEM_TOTAL - 1 - 428}"),
        "temperature.gpu": ("", lambda g: _idle(g)[0][:-1]),
        "utilization.gpu": ("%", lambda g: "0"),
        "utilization.memory": ("%", lambda g: "0"),
        "power.draw": ("W", lambda g: f"{float(_idle(g)[2][:-1]):.2f}"),
        "power.limit": ("W", lambda g: "350.00"),
        "clocks.sm": ("MHz", lambda g: "210"),
        "clocks.current.sm": ("MHz", lambda g: "210"),
        "clocks.max.sm": ("MHz", lambda g: "2520"),
        "pcie.link.gen.current": ("", lambda g: gen.get(g.link.current_speed(), "4")),
        "pcie.link.gen.max": ("", lambda g: gen.get(g.link.cap_speed, "4")),
        "pcie.link.gen.gpucurrent": ("", lambda g: gen.get(g.link.current_speed(), "4")),
        "pcie.link.width.current": ("", lambda g: str(g.link.width)),
        "pcie.link.width.max": ("", lambda g: str(g.link.cap_width)),
        "ecc.mode.current": ("", lambda g: "Enabled"),
        "ecc.errors.uncorrected.volatile.total": ("", lambda g: "0"),
        "fan.speed": ("%", lambda g: "[N/A]"),
        "count": ("", lambda g: str(len(node.gpus))),
    } | health_fields(node)


def query(ctx: Ctx, spec: str, fmt: str, io) -> int:
    options = {o.strip() for o in fmt.split(",")}
    if "csv" not in options:
        io.err.write(f'"{fmt}" is not a valid format. Use --help-query-gpu for more information.\n')
        return 2
    fields = _fields(ctx)
    names = [n.strip() for n in spec.split(",") if n.strip()]
    for n in names:
        if n not in fields:
            io.out.write(f'Field "{n}" is not a valid field to query.\n\n')
            return 2
    if "noheader" not in options:
        io.out.write(", ".join(n + (f" [{fields[n][0]}]" if fields[n][0] else "") for n in names) + "\n")
    for gpu in ctx.node.gpus:
        values = []
        for n in names:
            unit, fn = fields[n]
            value = fn(gpu)
            if unit and "nounits" not in options and not value.startswith("["):
                value = f"{value} {unit}"
            values.append(value)
        io.out.write(", ".join(values) + "\n")
    return 0


def nvidia_smi(ctx: Ctx, args, io) -> int:
    if args[:1] == ["topo"]:
        if "-m" in args[1:] or "--matrix" in args[1:]:
            io.out.write(topo_matrix(ctx.node))
            return 0
        io.err.write("Invalid combination of input arguments. Please run 'nvidia-smi topo -h' for help.\n")
        return 2
    qspec = fmt = None
    for i, a in enumerate(args):
        if a.startswith("--query-gpu="):
            qspec = a.split("=", 1)[1]
        elif a == "--query-gpu" and i + 1 < len(args):
            qspec = args[i + 1]
        elif a.startswith("--format="):
            fmt = a.split("=", 1)[1]
        elif a == "--format" and i + 1 < len(args):
            fmt = args[i + 1]
    if qspec is not None:
        if fmt is None:
            io.err.write("No format specified. Use --help-query-gpu for more information.\n")
            return 2
        return query(ctx, qspec, fmt, io)
    if "-L" in args or "--list-gpus" in args:
        for g in ctx.node.gpus:
            io.out.write(f"GPU {g.index}: NVIDIA L40S (UUID: {g.uuid})\n")
        return 0
    if "-q" in args or "--query" in args or "-a" in args:
        return detailed_query(ctx, args, io)
    status = settings(ctx, args, io)
    if status is not None:
        return status
    if args:  # the other forms are not simulated: say so instead of guessing
        io.err.write("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n")
        return 2
    io.out.write(table(ctx))
    return 0


COMMANDS = {"nvidia-smi": nvidia_smi}
ONLY_ON = {"nvidia-smi": lambda m: bool(m.state.gpus)}
