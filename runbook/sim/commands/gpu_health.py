"""GPU health tools of a simulated compute node: dmesg (the kernel log with any
Xid), dcgmi diag (DCGM 4 table layout), nvbandwidth (v0.4 layout) and gpu_burn
(wilicc/gpu-burn's progress and verdict lines). Results follow the node state:
a degraded PCIe link or ACS redirection slows the copies and fails DCGM's pcie
test, a pending row remap fails the deployment test, a faulty GPU fails the burn.
Long runs take a fraction of their nominal time (SPEEDUP)."""

from __future__ import annotations

import time

from .. import perfmodel
from ..pcidevices import devices
from .base import Ctx, modelled_wait

SPEEDUP = 4.0  # simulated seconds per real second for gpu_burn
H2D_GBPS = 26.0  # pinned host->device copy engine over PCIe Gen4 x16 (L40S, nvbandwidth README)


# ---- dmesg ---------------------------------------------------------------------------
def _boot_log(node) -> list[tuple[float, str]]:
    v = node.versions
    lines = [
        (
            0.0,
            f"Linux version {v['kernel']} (mockbuild@iad1-prod-build001.bld.equ.rockylinux.org) "
            "(gcc (GCC) 11.4.1 20230605, GNU ld version 2.35.2-42.el9) #1 SMP PREEMPT_DYNAMIC",
        ),
        (0.0, f"Command line: {node.platform.kernel_args}"),
    ]
    if "intel_iommu=on" in node.platform.kernel_args:
        lines.append((0.61, "DMAR: IOMMU enabled"))
    if "iommu=pt" in node.platform.kernel_args:
        lines.append((1.12, "iommu: Default domain type: Passthrough (set via kernel command line)"))
    for k, nic in enumerate(node.nics):
        lines.append((9.8 + k * 0.21, f"mlx5_core 0000:{nic.bus}: firmware version: {node.firmware(nic)}"))
    if node.gpus:
        lines += [
            (12.31, "nvidia: loading out-of-tree module taints kernel."),
            (
                12.52,
                f"NVRM: loading NVIDIA UNIX x86_64 Kernel Module  {v['driver']}  "
                "Release Build  (dvs-builder@U16-I3-B03-4-3)  Tue Jun 18 23:14:03 UTC 2024",
            ),
            (14.07, "nvidia-peermem: loading out-of-tree module taints kernel."),
        ]
    lines.append((21.4, "IPv6: ADDRCONF(NETDEV_CHANGE): ib4: link becomes ready"))
    up = max(60.0, time.time() - node.booted_at)
    extra = node.platform.kernel_log
    lines += [(min(up - 5.0, 3600.0 + 97.3 * i), text) for i, text in enumerate(extra)]
    return lines


def dmesg(ctx: Ctx, args, io) -> int:
    node = ctx.node
    ctime = any(a in ("-T", "--ctime") for a in args)
    iso = any(a in ("--time-format=iso",) for a in args) or (
        "--time-format" in args and args[args.index("--time-format") + 1 :][:1] == ["iso"]
    )
    for a in args:
        if a.startswith("-") and a not in (
            "-T",
            "--ctime",
            "--time-format",
            "--time-format=iso",
            "-x",
            "--nopager",
            "-k",
            "--kernel",
            "iso",
            "-L",
            "--color=never",
        ):
            io.err.write(f"dmesg: unrecognized option '{a}'\nTry 'dmesg --help' for more information.\n")
            return 1
    for t, text in _boot_log(node):
        if ctime:
            stamp = time.strftime("[%a %b %d %H:%M:%S %Y]", time.gmtime(node.booted_at + t))
        elif iso:
            stamp = (
                time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(node.booted_at + t))
                + f",{int(t % 1 * 1e6):06d}+00:00"
            )
        else:
            stamp = f"[{t:12.6f}]"
        io.out.write(f"{stamp} {text}\n")
    return 0


# ---- bandwidth model -----------------------------------------------------------------
def gpu_h2d(gpu) -> float:
    """A GPU's copy bandwidth under load: the one link model of perfmodel.py (the
    loaded speed and width against the GPU's capability)."""
    return H2D_GBPS * perfmodel.link_ratio(gpu.link)


def gpu_d2d(node, a, b, acs: bool | None = None) -> float:
    """`acs`: acs_redirects(node) when the caller asked it already (a matrix of
    every pair asks once: it lists the node's PCI devices)."""
    base = min(gpu_h2d(a), gpu_h2d(b))
    if a.switch and a.switch == b.switch:
        # peer traffic inside the switch, unless ACS redirects it up to the root complex
        redirects = acs_redirects(node) if acs is None else acs
        return base * (0.55 if redirects else 0.97)
    return base * (0.9 if a.numa == b.numa else 0.8)


def acs_redirects(node) -> bool:
    """Any ACS control bit on at a PCIe switch port (what lspci -vv shows as ACSCtl '+')."""
    return any(node.platform.acs(d.bus) for d in devices(node) if d.kind == "bridge")


def degraded(gpu) -> bool:
    return perfmodel.link_ratio(gpu.link) < 1.0


def _jitter(*keys: int) -> float:
    return ((sum(k * 37 for k in keys) % 17) - 8) * 0.013


# ---- dcgmi diag ----------------------------------------------------------------------
TESTS = {
    1: [("Deployment", "software")],
    2: [("Deployment", "software"), ("Hardware", "memory"), ("Integration", "pcie")],
    3: [
        ("Deployment", "software"),
        ("Hardware", "memory"),
        ("Hardware", "diagnostic"),
        ("Integration", "pcie"),
        ("Stress", "memory_bandwidth"),
        ("Stress", "targeted_stress"),
        ("Stress", "targeted_power"),
    ],
    4: [
        ("Deployment", "software"),
        ("Hardware", "memory"),
        ("Hardware", "diagnostic"),
        ("Hardware", "pulse_test"),
        ("Integration", "pcie"),
        ("Stress", "memory_bandwidth"),
        ("Stress", "memtest"),
        ("Stress", "targeted_stress"),
        ("Stress", "targeted_power"),
    ],
}
SECONDS = {1: 0.2, 2: 0.5, 3: 1.0, 4: 1.5}


def _row(left: str, right: str) -> str:
    return f"| {left:<26}| {right:<47}|"


def _section(name: str, first: bool) -> str:
    edge = "|" if first else "+"
    head = f"-----  {name}  "
    return f"{edge}{head:-<27}+{'-' * 48}{edge}"


def _wrap(text: str, width: int = 46) -> list[str]:
    out, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return out + ([line] if line else [])


def _failure(node, gpu, test: str) -> str | None:
    health = node.platform.gpus[gpu.index]
    if test == "software" and health.remap_pending:
        return f"GPU {gpu.index} has uncorrectable memory errors and row remappings are pending"
    if test == "pcie" and (degraded(gpu) or "pcie" in health.dcgm_fail):
        bw = gpu_h2d(gpu) * (0.45 if not degraded(gpu) else 1.0)
        return (
            f"Bandwidth of GPU {gpu.index} in direction host to device of {bw:.2f} did not exceed "
            f"minimum required bandwidth of 19.20."
        )
    if test in health.dcgm_fail:
        return f"GPU {gpu.index} failed the {test} test"
    return None


async def dcgmi(ctx: Ctx, args, io) -> int:
    node = ctx.node
    if not args or args[0] != "diag":
        io.err.write("Usage: dcgmi <subsystem>\n  subsystems: discovery, diag, health, stats, ...\n")
        return 255
    level = None
    for i, a in enumerate(args[1:], start=1):
        if a in ("-r", "--run") and i + 1 < len(args):
            level = args[i + 1]
        elif a.startswith("--run="):
            level = a.split("=", 1)[1]
    if level not in ("1", "2", "3", "4", "short", "medium", "long", "xlong"):
        io.err.write("Error: Invalid value for -r/--run. Specify a level 1-4 or a test name.\n")
        return 255
    level_n = {"short": 1, "medium": 2, "long": 3, "xlong": 4}.get(level) or int(level)
    await modelled_wait(ctx, SECONDS[level_n])
    ids = ", ".join("26b9" for _ in node.gpus)
    lines = [
        "Successfully ran diagnostic for group.",
        "+---------------------------+------------------------------------------------+",
        "| Diagnostic                | Result                                         |",
        "+===========================+================================================+",
        _section("Metadata", True),
        _row("DCGM Version", "4.0.0"),
        _row("Driver Version Detected", node.versions["driver"]),
        _row("GPU Device IDs Detected", ids),
    ]
    current = ""
    failed = False
    for section, test in TESTS[level_n]:
        if section != current:
            lines.append(_section(section, current == ""))
            current = section
        results = [(g, _failure(node, g, test)) for g in node.gpus]
        bad = [(g, why) for g, why in results if why]
        failed = failed or bool(bad)
        lines.append(_row(test, "Fail" if bad else "Pass"))
        lines += [_row("", f"GPU{g.index}: {'Fail' if why else 'Pass'}") for g, why in results]
        for _, why in bad:
            for k, part in enumerate(_wrap(why)):
                lines.append(_row("Error" if k == 0 else "", part if k == 0 else " " + part))
    lines.append("+---------------------------+------------------------------------------------+")
    io.out.write("\n".join(lines) + "\n")
    return 226 if failed else 0  # DCGM_ST_NVVS_ERROR (-30) as an exit status


# ---- nvbandwidth ---------------------------------------------------------------------
NVB_TESTS = (
    "host_to_device_memcpy_ce",
    "device_to_host_memcpy_ce",
    "device_to_device_memcpy_read_ce",
    "device_to_device_memcpy_write_ce",
)


def _matrix(title: str, cols: int, rows: list[list[float | None]]) -> list[str]:
    out = [title, " " + "".join(f"{c:>10}" for c in range(cols))]
    for r, row in enumerate(rows):
        out.append(f"{r}" + "".join(f"{'N/A' if v is None else f'{v:.2f}':>10}" for v in row))
    return out


async def nvbandwidth(ctx: Ctx, args, io) -> int:
    node = ctx.node
    tests: list[str] = []
    i = 0
    while i < len(args):
        if args[i] in ("-t", "--testcase") and i + 1 < len(args):
            tests += args[i + 1].split(",")
            i += 2
            continue
        if args[i].startswith("--testcase="):
            tests += args[i].split("=", 1)[1].split(",")
        elif args[i] in ("-i", "--iterations", "-b", "--bufferSize", "-s", "--testSamples"):
            i += 1
        i += 1
    tests = tests or list(NVB_TESTS)
    for t in tests:
        if t not in NVB_TESTS:
            io.err.write(f"ERROR: Testcase {t} not found!\n")
            return 1
    v = node.versions
    lines = [
        "nvbandwidth Version: v0.4",
        "Built from Git version: v0.4",
        "",
        "NOTE: This tool reports current measured bandwidth on your system.",
        "Additional system-specific tuning may be required to achieve maximal peak bandwidth.",
        "",
        "CUDA Runtime Version: 12040",
        "CUDA Driver Version: 12040",
        f"Driver Version: {v['driver']}",
        "",
    ]
    lines += [f"Device {g.index}: NVIDIA L40S" for g in node.gpus]
    gpus = node.gpus
    for k, t in enumerate(tests):
        lines += ["", f"Running {t}."]
        if t.startswith("host_to_device") or t.startswith("device_to_host"):
            row = [gpu_h2d(g) * (1 - 0.002 * ((g.index + k) % 3)) for g in gpus]
            title = (
                "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)"
                if t.startswith("host")
                else "memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)"
            )
            lines += _matrix(title, len(gpus), [row])
            total = sum(row)
        else:
            acs = acs_redirects(node)
            rows = [
                [None if a is b else gpu_d2d(node, a, b, acs) + _jitter(a.index, b.index) for b in gpus]
                for a in gpus
            ]
            lines += _matrix(
                "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)"
                if "read" in t
                else "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)",
                len(gpus),
                rows,
            )
            total = sum(x for r in rows for x in r if x is not None)
        lines += ["", f"SUM {t} {total:.2f}"]
    # while the copies run every GPU's link is busy: it leaves the idle 2.5GT/s
    # state (PciLink.current_speed), so nvidia-smi or lspci probed meanwhile see
    # the loaded speed
    for g in gpus:
        g.link.busy += 1
    try:
        await modelled_wait(ctx, 0.3)
    finally:
        for g in gpus:
            g.link.busy -= 1
    io.out.write("\n".join(lines) + "\n")
    return 0


# ---- gpu_burn ------------------------------------------------------------------------
async def gpu_burn(ctx: Ctx, args, io) -> int:
    node = ctx.node
    seconds, tensor, doubles = 10, False, False
    for a in args:
        if a.isdigit():
            seconds = int(a)
        elif a == "-tc":
            tensor = True
        elif a == "-d":
            doubles = True
    if not ctx.fs.isfile(ctx.path("compare.ptx")):
        io.err.write(
            "Couldn't init a GPU test: Error in load module (gpu_burn-drv.cpp:239): "
            "a PTX JIT compilation failed\n"
        )
        return 1
    node.platform.burn_runs += 1
    ctx.machine.changed()
    io.out.write(f"Burning for {seconds} seconds.\n")
    for g in node.gpus:
        io.out.write(f"GPU {g.index}: NVIDIA L40S (UUID: {g.uuid})\n")
    kind = "DOUBLES" if doubles else "FLOATS"
    for g in node.gpus:
        io.out.write(
            f"Initialized device {g.index} with 45589 MB of memory (44950 MB available, using 40455 MB "
            f"of it), using {kind}{', using Tensor Cores' if tensor else ''}\n"
        )
    io.out.write("Results are 268435456 bytes each, thus performing 148 iterations\n")
    gflops = 90000 if tensor else 45000
    steps = 10
    faulty = [node.platform.gpus[g.index].burn_faulty for g in node.gpus]
    for step in range(1, steps + 1):
        await modelled_wait(ctx, seconds / SPEEDUP / steps)
        done = step * 148 * max(1, seconds // 10)
        errors = " - ".join(
            f"{(step * 1311) if bad else 0} {' (WARNING!)' if bad else ''}".rstrip() + " " for bad in faulty
        )
        temps = " - ".join(f"{min(45 + step * 2 + g.index % 3, 70)} C " for g in node.gpus)
        power = " - ".join(f"{335 + g.index % 7} W " for g in node.gpus)
        procd = " - ".join(f"{done} ({gflops - 311 * (g.index % 4)} Gflop/s) " for g in node.gpus)
        io.out.write(
            f"\r{step * 100 / steps:.1f}%  proc'd: {procd}  errors: {errors}  temps: {temps}  power: {power}"
        )
    io.out.write("\nKilling processes with SIGTERM (soft kill)\ndone\n\n")
    io.out.write(f"Tested {len(node.gpus)} GPUs:\n")
    for g, bad in zip(node.gpus, faulty):
        io.out.write(f"\tGPU {g.index}: {'FAULTY' if bad else 'OK'}\n")
    return 0


COMMANDS = {"dmesg": dmesg, "dcgmi": dcgmi, "nvbandwidth": nvbandwidth, "gpu_burn": gpu_burn}
ONLY_ON = {name: (lambda m: bool(m.state.gpus)) for name in ("dcgmi", "nvbandwidth", "gpu_burn")}
