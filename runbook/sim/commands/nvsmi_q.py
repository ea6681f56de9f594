"""nvidia-smi -q [-d TYPE[,TYPE...]] [-i N], and the settings -pm / -pl / -e, for the
simulated L40S (layout of driver 550: `Clocks Event Reasons`, ECC with SRAM
sources, Remapped Rows, GPU Power Readings, BAR1 Memory Usage). Values come
from the node's platform state (platform.py). Helpers of nvidia_smi.py."""
from __future__ import annotations

import time

from .base import Ctx

W = 38  # the name column: "    Persistence Mode                      : Enabled"

# clocks event reasons: bit -> (label, indent level)
REASONS = [(0x1, "Idle", 2), (0x2, "Applications Clocks Setting", 2), (0x4, "SW Power Cap", 2),
           (0x8, "HW Slowdown", 2), (0x40, "HW Thermal Slowdown", 3), (0x80, "HW Power Brake Slowdown", 3),
           (0x10, "Sync Boost", 2), (0x20, "SW Thermal Slowdown", 2), (0x100, "Display Clock Setting", 2)]
DISPLAY_TYPES = {"MEMORY", "UTILIZATION", "ECC", "TEMPERATURE", "POWER", "CLOCK", "COMPUTE", "PIDS",
                 "PERFORMANCE", "SUPPORTED_CLOCKS", "PAGE_RETIREMENT", "ACCOUNTING", "ENCODER_STATS",
                 "SUPPORTED_GPU_TARGET_TEMP", "VOLTAGE", "FBC_STATS", "ROW_REMAPPER", "RESET_STATUS",
                 "GSP_FIRMWARE_VERSION", "POWER_SMOOTHING", "POWER_PROFILES"}
GEN = {"2.5GT/s": 1, "5GT/s": 2, "8GT/s": 3, "16GT/s": 4, "32GT/s": 5}


def _kv(level: int, name: str, value: object) -> str:
    pad = "    " * level
    return f"{pad}{name:<{W - len(pad) + 4}}: {value}"


def _head(level: int, name: str) -> str:
    return "    " * level + name


def reason_hex(bits: int) -> str:
    return f"0x{bits:016x}"


def _sections(node, gpu, health) -> list[tuple[str, list[str]]]:
    """(display type that shows the section, or "" for the full -q only, lines)."""
    active = "Active"
    idle_power = 31 + gpu.index % 4 + 0.44
    link = gpu.link
    reasons = [_kv(lvl, label, active if health.event_reasons & bit else "Not Active")
               for bit, label, lvl in REASONS]
    return [
        ("", [_kv(1, "Product Name", "NVIDIA L40S"), _kv(1, "Product Brand", "NVIDIA"),
              _kv(1, "Product Architecture", "Ada Lovelace"),
              _kv(1, "Persistence Mode", "Enabled" if health.persistence else "Disabled"),
              _kv(1, "Serial Number", gpu.serial), _kv(1, "GPU UUID", gpu.uuid),
              _kv(1, "Minor Number", gpu.index), _kv(1, "VBIOS Version", health.vbios),
              _kv(1, "Board Part Number", "900-2G133-0080-000"), _kv(1, "GPU Part Number", "26B9-896-A1")]),
        ("RESET_STATUS", [_head(1, "GPU Reset Status"),
                          _kv(2, "Reset Required", "Yes" if health.remap_pending else "No"),
                          _kv(2, "Drain and Reset Recommended", "No")]),
        ("", [_head(1, "PCI"), _kv(2, "Bus", f"0x{gpu.bus[:2].upper()}"), _kv(2, "Device", "0x00"),
              _kv(2, "Domain", "0x0000"), _kv(2, "Device Id", "0x26B910DE"),
              _kv(2, "Bus Id", f"00000000:{gpu.bus.upper()}"), _kv(2, "Sub System Id", "0x185110DE"),
              _head(2, "GPU Link Info"), _head(3, "PCIe Generation"),
              _kv(4, "Max", GEN.get(link.cap_speed, 4)), _kv(4, "Current", 1),
              _kv(4, "Device Current", 1), _kv(4, "Device Max", GEN.get(link.cap_speed, 4)),
              _kv(4, "Host Max", GEN.get(link.speed, 4)), _head(3, "Link Width"),
              _kv(4, "Max", f"{link.cap_width}x"), _kv(4, "Current", f"{link.width}x")]),
        ("PERFORMANCE", [_kv(1, "Performance State", "P8"), _head(1, "Clocks Event Reasons")] + reasons),
        ("MEMORY", [_head(1, "FB Memory Usage"), _kv(2, "Total", "46068 MiB"), _kv(2, "Reserved", "479 MiB"),
                    _kv(2, "Used", "1 MiB"), _kv(2, "Free", "45589 MiB"),
                    _head(1, "BAR1 Memory Usage"), _kv(2, "Total", f"{health.bar1_mib} MiB"),
                    _kv(2, "Used", "1 MiB"), _kv(2, "Free", f"{health.bar1_mib - 1} MiB")]),
        ("ECC", [_head(1, "ECC Mode"), _kv(2, "Current", "Enabled" if health.ecc_enabled else "Disabled"),
                 _kv(2, "Pending", "Enabled" if health.ecc_enabled else "Disabled"),
                 _head(1, "ECC Errors"), _head(2, "Volatile"),
                 _kv(3, "SRAM Correctable", 0), _kv(3, "SRAM Uncorrectable Parity", 0),
                 _kv(3, "SRAM Uncorrectable SEC-DED", 0), _kv(3, "DRAM Correctable", health.dram_correctable),
                 _kv(3, "DRAM Uncorrectable", health.dram_uncorrectable), _head(2, "Aggregate"),
                 _kv(3, "SRAM Correctable", 0), _kv(3, "SRAM Uncorrectable Parity", 0),
                 _kv(3, "SRAM Uncorrectable SEC-DED", 0), _kv(3, "DRAM Correctable", health.dram_correctable),
                 _kv(3, "DRAM Uncorrectable", health.dram_uncorrectable_aggregate),
                 _kv(3, "SRAM Threshold Exceeded", "No"), _head(2, "Aggregate Uncorrectable SRAM Sources"),
                 _kv(3, "SRAM L2", 0), _kv(3, "SRAM SM", 0), _kv(3, "SRAM Microcontroller", 0),
                 _kv(3, "SRAM PCIE", 0), _kv(3, "SRAM Other", 0)]),
        # Ada has row remapping, not page retirement: the driver prints N/A there
        ("PAGE_RETIREMENT", [_head(1, "Retired Pages"), _kv(2, "Single Bit ECC", "N/A"),
                             _kv(2, "Double Bit ECC", "N/A"), _kv(2, "Pending Page Blacklist", "N/A")]),
        ("ROW_REMAPPER", [_head(1, "Remapped Rows"), _kv(2, "Correctable Error", 0),
                          _kv(2, "Uncorrectable Error", health.remapped_uncorrectable),
                          _kv(2, "Pending", "Yes" if health.remap_pending else "No"),
                          _kv(2, "Remapping Failure Occurred", "Yes" if health.remap_failure else "No"),
                          _head(2, "Bank Remap Availability Histogram"),
                          _kv(3, "Max", f"{192 - health.remapped_uncorrectable} bank(s)"),
                          _kv(3, "High", f"{health.remapped_uncorrectable} bank(s)"),
                          _kv(3, "Partial", "0 bank(s)"), _kv(3, "Low", "0 bank(s)"), _kv(3, "None", "0 bank(s)")]),
        ("TEMPERATURE", [_head(1, "Temperature"), _kv(2, "GPU Current Temp", f"{29 + gpu.index % 5} C"),
                         _kv(2, "GPU T.Limit Temp", "57 C"), _kv(2, "GPU Shutdown T.Limit Temp", "-5 C"),
                         _kv(2, "GPU Slowdown T.Limit Temp", "-2 C")]),
        ("POWER", [_head(1, "GPU Power Readings"), _kv(2, "Power Draw", f"{idle_power:.2f} W"),
                   _kv(2, "Current Power Limit", f"{health.power_limit_w:.2f} W"),
                   _kv(2, "Requested Power Limit", f"{health.power_limit_w:.2f} W"),
                   _kv(2, "Default Power Limit", f"{health.default_power_limit_w:.2f} W"),
                   _kv(2, "Min Power Limit", "100.00 W"), _kv(2, "Max Power Limit", "350.00 W")]),
        ("CLOCK", [_head(1, "Clocks"), _kv(2, "Graphics", "210 MHz"), _kv(2, "SM", "210 MHz"),
                   _kv(2, "Memory", "405 MHz"), _kv(2, "Video", "1185 MHz"), _head(1, "Max Clocks"),
                   _kv(2, "Graphics", "2520 MHz"), _kv(2, "SM", "2520 MHz"), _kv(2, "Memory", "9001 MHz"),
                   _kv(2, "Video", "1965 MHz")]),
    ]


def query(ctx: Ctx, args: list[str], io) -> int:
    node = ctx.node
    types: set[str] = set()
    only: int | None = None
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-d", "--display") and i + 1 < len(args):
            types |= {t.strip().upper() for t in args[i + 1].split(",") if t.strip()}
            i += 2
            continue
        if a.startswith("--display="):
            types |= {t.strip().upper() for t in a.split("=", 1)[1].split(",") if t.strip()}
        elif a in ("-i", "--id") and i + 1 < len(args):
            if not args[i + 1].isdigit() or int(args[i + 1]) >= len(node.gpus):
                io.out.write("No devices were found\n")
                return 6
            only = int(args[i + 1])
            i += 2
            continue
        i += 1
    bad = types - DISPLAY_TYPES
    if bad:
        io.err.write(f'"{",".join(sorted(bad))}" is not a valid display type. '
                     "Use --help for more information.\n")
        return 2
    v = node.versions
    stamp = time.strftime("%a %b %d %H:%M:%S %Y", time.localtime())
    out = ["", "==============NVSMI LOG==============", "", _kv(0, "Timestamp", stamp),
           _kv(0, "Driver Version", v["driver"]), _kv(0, "CUDA Version", v["cuda"]), "",
           _kv(0, "Attached GPUs", len(node.gpus))]
    for gpu in node.gpus:
        if only is not None and gpu.index != only:
            continue
        out.append(f"GPU 00000000:{gpu.bus.upper()}")
        for kind, lines in _sections(node, gpu, node.platform.gpus[gpu.index]):
            if not types or kind in types:
                out.extend(lines)
        out.append("")
    io.out.write("\n".join(out) + "\n")
    return 0


def settings(ctx: Ctx, args: list[str], io) -> int | None:
    """-pm 0|1, -pl WATTS (with -i N); None when the arguments are not a setting."""
    node = ctx.node
    targets = list(range(len(node.gpus)))
    if "-i" in args and args.index("-i") + 1 < len(args):
        value = args[args.index("-i") + 1]
        if not value.isdigit() or int(value) >= len(node.gpus):
            io.out.write("No devices were found\n")
            return 6
        targets = [int(value)]
    for flag in ("-pm", "--persistence-mode", "-pl", "--power-limit"):
        if flag in args and args.index(flag) + 1 < len(args):
            value = args[args.index(flag) + 1]
            break
    else:
        return None
    if flag in ("-pm", "--persistence-mode"):
        on = {"1": True, "ENABLED": True, "0": False, "DISABLED": False}.get(value.upper())
        if on is None:
            io.err.write(f'Invalid value "{value}" for persistence mode. See nvidia-smi -h for help.\n')
            return 2
        for t in targets:
            node.platform.gpus[t].persistence = on
            bus = f"00000000:{node.gpus[t].bus.upper()}"
            io.out.write(f"{'Enabled' if on else 'Disabled'} persistence mode for GPU {bus}.\n")
        io.out.write("All done.\n")
        ctx.machine.changed()
        return 0
    try:
        watts = float(value)
    except ValueError:
        io.err.write(f'Invalid value "{value}" for power limit.\n')
        return 2
    if not 100.0 <= watts <= 350.0:
        io.err.write(f"Provided power limit {watts:.2f} W is not a valid power limit which should be "
                     "between 100.00 W and 350.00 W for GPU 00000000:" f"{node.gpus[targets[0]].bus.upper()}\n"
                     "Terminating early due to previous errors.\n")
        return 2
    for t in targets:
        health = node.platform.gpus[t]
        old = health.power_limit_w
        health.power_limit_w = watts
        io.out.write(f"Power limit for GPU 00000000:{node.gpus[t].bus.upper()} was set to {watts:.2f} W "
                     f"from {old:.2f} W.\n")
    io.out.write("All done.\n")
    ctx.machine.changed()
    return 0


def health_fields(node) -> dict:
    """--query-gpu fields that read the platform state (added to nvidia_smi's table)."""
    def h(g):
        return node.platform.gpus[g.index]
    return {
        "vbios_version": ("", lambda g: h(g).vbios),
        "persistence_mode": ("", lambda g: "Enabled" if h(g).persistence else "Disabled"),
        "power.limit": ("W", lambda g: f"{h(g).power_limit_w:.2f}"),
        "power.default_limit": ("W", lambda g: f"{h(g).default_power_limit_w:.2f}"),
        "enforced.power.limit": ("W", lambda g: f"{h(g).power_limit_w:.2f}"),
        "clocks_event_reasons.active": ("", lambda g: reason_hex(h(g).event_reasons)),
        "clocks_throttle_reasons.active": ("", lambda g: reason_hex(h(g).event_reasons)),
        "ecc.mode.current": ("", lambda g: "Enabled" if h(g).ecc_enabled else "Disabled"),
        "ecc.errors.uncorrected.volatile.total": ("", lambda g: str(h(g).dram_uncorrectable)),
        "ecc.errors.uncorrected.aggregate.total": ("", lambda g: str(h(g).dram_uncorrectable_aggregate)),
        "remapped_rows.pending": ("", lambda g: "Yes" if h(g).remap_pending else "No"),
        "remapped_rows.failure": ("", lambda g: "Yes" if h(g).remap_failure else "No"),
    }
