"""`nvidia-smi -q` (also -a, -q -i N|BUSID, -q -d TYPE[,TYPE...]): the one
simulation of the driver 550 log of an L40S, key for key and indent for indent
as the real idle L40S prints it (Performance State P8, PCIe Generation Current 1
at idle, Max 4). Values come from the node: bus id, UUID, serial, the link's
current and maximum generation and width (P0 while a host<->device copy keeps
the GPU busy), and the GPU-health state of platform.py (persistence, VBIOS,
reset status, BAR1, ECC and remapped rows, power limits, clocks event reasons)."""

from __future__ import annotations

import time

from .base import Ctx

GEN = {"2.5GT/s": "1", "5GT/s": "2", "8GT/s": "3", "16GT/s": "4", "32GT/s": "5"}
WIDTH = 42  # the key column, as nvidia-smi pads it


def _line(depth: int, key: str, value: str | None = None) -> str:
    pad = "    " * depth + key
    return pad if value is None else f"{pad:<{WIDTH}}: {value}"


# clocks event reasons: bit -> (label, indent level), in the order the driver prints them
REASONS = [
    (0x1, "Idle", 2),
    (0x2, "Applications Clocks Setting", 2),
    (0x4, "SW Power Cap", 2),
    (0x8, "HW Slowdown", 2),
    (0x40, "HW Thermal Slowdown", 3),
    (0x80, "HW Power Brake Slowdown", 3),
    (0x10, "Sync Boost", 2),
    (0x20, "SW Thermal Slowdown", 2),
    (0x100, "Display Clock Setting", 2),
]
# `-d TYPE`: the top-level sections each display type shows. There is no PCI type in
# the real tool (`nvidia-smi -h`): the PCI section comes with the whole `-q` only.
SECTIONS = {
    "RESET_STATUS": ["GPU Reset Status"],
    "GSP_FIRMWARE_VERSION": ["GSP Firmware Version"],
    "PERFORMANCE": ["Performance State", "Clocks Event Reasons"],
    "MEMORY": ["FB Memory Usage", "BAR1 Memory Usage", "Conf Compute Protected Memory Usage"],
    "COMPUTE": ["Compute Mode"],
    "UTILIZATION": ["Utilization"],
    "ENCODER_STATS": ["Encoder Stats"],
    "FBC_STATS": ["FBC Stats"],
    "ECC": ["ECC Mode", "ECC Errors"],
    "PAGE_RETIREMENT": ["Retired Pages"],
    "ROW_REMAPPER": ["Remapped Rows"],
    "TEMPERATURE": ["Temperature"],
    "POWER": ["GPU Power Readings", "GPU Memory Power Readings ", "Module Power Readings"],
    "CLOCK": [
        "Clocks",
        "Applications Clocks",
        "Default Applications Clocks",
        "Deferred Clocks",
        "Max Clocks",
        "Max Customer Boost Clocks",
        "Clock Policy",
    ],
    "VOLTAGE": ["Voltage"],
    "PIDS": ["Processes"],
}
DISPLAY_TYPES = set(SECTIONS) | {
    "SUPPORTED_CLOCKS",
    "ACCOUNTING",
    "SUPPORTED_GPU_TARGET_TEMP",
    "POWER_SMOOTHING",
    "POWER_PROFILES",
}


def _gpu(node, gpu) -> list[tuple]:
    link = gpu.link
    busy = bool(link.busy)
    bus = gpu.bus.upper()
    h = node.platform.gpus[gpu.index]
    # a copy keeps the GPU busy: the idle reason clears
    bits = h.event_reasons & ~0x1 if busy else h.event_reasons
    reasons = [(lvl, label, "Active" if bits & bit else "Not Active") for bit, label, lvl in REASONS]
    ecc = "Enabled" if h.ecc_enabled else "Disabled"
    power = f"{h.power_limit_w:.2f} W"
    return [
        (1, "Product Name", "NVIDIA L40S"),
        (1, "Product Brand", "NVIDIA"),
        (1, "Product Architecture", "Ada Lovelace"),
        (1, "Display Mode", "Enabled"),
        (1, "Display Active", "Disabled"),
        (1, "Persistence Mode", "Enabled" if h.persistence else "Disabled"),
        (1, "Addressing Mode", "None"),
        (1, "MIG Mode"),
        (2, "Current", "N/A"),
        (2, "Pending", "N/A"),
        (1, "Accounting Mode", "Disabled"),
        (1, "Accounting Mode Buffer Size", "4000"),
        (1, "Driver Model"),
        (2, "Current", "N/A"),
        (2, "Pending", "N/A"),
        (1, "Serial Number", gpu.serial),
        (1, "GPU UUID", gpu.uuid),
        (1, "Minor Number", str(gpu.index)),
        (1, "VBIOS Version", h.vbios),
        (1, "MultiGPU Board", "No"),
        (1, "Board ID", f"0x{bus[:2].lower()}00"),
        (1, "Board Part Number", "900-2G133-0080-000"),
        (1, "GPU Part Number", "26B9-896-A1"),
        (1, "FRU Part Number", "N/A"),
        (1, "Module ID", "1"),
        (1, "Inforom Version"),
        (2, "Image Version", "G133.0242.00.03"),
        (2, "OEM Object", "2.1"),
        (2, "ECC Object", "6.16"),
        (2, "Power Management Object", "N/A"),
        (1, "Inforom BBX Object Flush"),
        (2, "Latest Timestamp", "N/A"),
        (2, "Latest Duration", "N/A"),
        (1, "GPU Operation Mode"),
        (2, "Current", "N/A"),
        (2, "Pending", "N/A"),
        (1, "GPU C2C Mode", "N/A"),
        (1, "GPU Virtualization Mode"),
        (2, "Virtualization Mode", "None"),
        (2, "Host VGPU Mode", "N/A"),
        (2, "vGPU Heterogeneous Mode", "N/A"),
        (1, "GPU Reset Status"),
        (2, "Reset Required", "Yes" if h.remap_pending else "No"),
        (2, "Drain and Reset Recommended", "No"),
        (1, "GSP Firmware Version", "N/A"),
        (1, "IBMNPU"),
        (2, "Relaxed Ordering Mode", "N/A"),
        (1, "PCI"),
        (2, "Bus", f"0x{bus[:2]}"),
        (2, "Device", "0x00"),
        (2, "Domain", "0x0000"),
        (2, "Base Classcode", "0x3"),
        (2, "Sub Classcode", "0x2"),
        (2, "Device Id", "0x26B910DE"),
        (2, "Bus Id", f"00000000:{bus}"),
        (2, "Sub System Id", "0x185110DE"),
        (2, "GPU Link Info"),
        (3, "PCIe Generation"),
        (4, "Max", GEN.get(link.cap_speed, "4")),
        (4, "Current", GEN.get(link.current_speed(), "4")),
        (4, "Device Current", GEN.get(link.current_speed(), "4")),
        (4, "Device Max", "4"),
        (4, "Host Max", GEN.get(link.cap_speed, "4")),
        (3, "Link Width"),
        (4, "Max", f"{link.cap_width}x"),
        (4, "Current", f"{link.width}x"),
        (2, "Bridge Chip"),
        (3, "Type", "N/A"),
        (3, "Firmware", "N/A"),
        (2, "Replays Since Reset", "0"),
        (2, "Replay Number Rollovers", "0"),
        (2, "Tx Throughput", "12500000 KB/s" if busy else "50 KB/s"),
        (2, "Rx Throughput", "0 KB/s"),
        (2, "Atomic Caps Inbound", "N/A"),
        (2, "Atomic Caps Outbound", "N/A"),
        (1, "Fan Speed", "N/A"),
        (1, "Performance State", "P0" if busy else "P8"),
        (1, "Clocks Event Reasons"),
        *reasons,
        (1, "Sparse Operation Mode", "N/A"),
        (1, "FB Memory Usage"),
        (2, "Total", "46068 MiB"),
        (2, "Reserved", "479 MiB"),
        (2, "Used", "1 MiB"),
        (2, "Free", "45589 MiB"),
        (1, "BAR1 Memory Usage"),
        (2, "Total", f"{h.bar1_mib} MiB"),
        (2, "Used", "1 MiB"),
        (2, "Free", f"{h.bar1_mib - 1} MiB"),
        (1, "Conf Compute Protected Memory Usage"),
        (2, "Total", "0 MiB"),
        (2, "Used", "0 MiB"),
        (2, "Free", "0 MiB"),
        (1, "Compute Mode", "Default"),
        (1, "Utilization"),
        (2, "Gpu", "0 %"),
        (2, "Memory", "0 %"),
        (2, "Encoder", "0 %"),
        (2, "Decoder", "0 %"),
        (2, "JPEG", "0 %"),
        (2, "OFA", "0 %"),
        (1, "Encoder Stats"),
        (2, "Active Sessions", "0"),
        (2, "Average FPS", "0"),
        (2, "Average Latency", "0"),
        (1, "FBC Stats"),
        (2, "Active Sessions", "0"),
        (2, "Average FPS", "0"),
        (2, "Average Latency", "0"),
        (1, "ECC Mode"),
        (2, "Current", ecc),
        (2, "Pending", ecc),
        (1, "ECC Errors"),
        (2, "Volatile"),
        (3, "SRAM Correctable", "0"),
        (3, "SRAM Uncorrectable Parity", "0"),
        (3, "SRAM Uncorrectable SEC-DED", "0"),
        (3, "DRAM Correctable", str(h.dram_correctable)),
        (3, "DRAM Uncorrectable", str(h.dram_uncorrectable)),
        (2, "Aggregate"),
        (3, "SRAM Correctable", "0"),
        (3, "SRAM Uncorrectable Parity", "0"),
        (3, "SRAM Uncorrectable SEC-DED", "0"),
        (3, "DRAM Correctable", str(h.dram_correctable)),
        (3, "DRAM Uncorrectable", str(h.dram_uncorrectable_aggregate)),
        (3, "SRAM Threshold Exceeded", "No"),
        (2, "Aggregate Uncorrectable SRAM Sources"),
        (3, "SRAM L2", "0"),
        (3, "SRAM SM", "0"),
        (3, "SRAM Microcontroller", "0"),
        (3, "SRAM PCIE", "0"),
        (3, "SRAM Other", "0"),
        (1, "Retired Pages"),
        (2, "Single Bit ECC", "N/A"),
        (2, "Double Bit ECC", "N/A"),
        (2, "Pending Page Blacklist", "N/A"),
        (1, "Remapped Rows"),
        (2, "Correctable Error", "0"),
        (2, "Uncorrectable Error", str(h.remapped_uncorrectable)),
        (2, "Pending", "Yes" if h.remap_pending else "No"),
        (2, "Remapping Failure Occurred", "Yes" if h.remap_failure else "No"),
        (2, "Bank Remap Availability Histogram"),
        (3, "Max", f"{192 - h.remapped_uncorrectable} bank(s)"),
        (3, "High", f"{h.remapped_uncorrectable} bank(s)"),
        (3, "Partial", "0 bank(s)"),
        (3, "Low", "0 bank(s)"),
        (3, "None", "0 bank(s)"),
        (1, "Temperature"),
        (2, "GPU Current Temp", f"{29 + gpu.index % 5} C"),
        (2, "GPU T.Limit Temp", "57 C"),
        (2, "GPU Shutdown T.Limit Temp", "-5 C"),
        (2, "GPU Slowdown T.Limit Temp", "-2 C"),
        (2, "GPU Max Operating T.Limit Temp", "0 C"),
        (2, "GPU Target Temperature", "N/A"),
        (2, "Memory Current Temp", "N/A"),
        (2, "Memory Max Operating T.Limit Temp", "N/A"),
        (1, "GPU Power Readings"),
        (2, "Power Draw", f"{31 + gpu.index % 4}.44 W"),
        (2, "Current Power Limit", power),
        (2, "Requested Power Limit", power),
        (2, "Default Power Limit", f"{h.default_power_limit_w:.2f} W"),
        (2, "Min Power Limit", "100.00 W"),
        (2, "Max Power Limit", "350.00 W"),
        (1, "GPU Memory Power Readings "),
        (2, "Power Draw", "N/A"),
        (1, "Module Power Readings"),
        (2, "Power Draw", "N/A"),
        (2, "Current Power Limit", "N/A"),
        (2, "Requested Power Limit", "N/A"),
        (2, "Default Power Limit", "N/A"),
        (2, "Min Power Limit", "N/A"),
        (2, "Max Power Limit", "N/A"),
        (1, "Clocks"),
        (2, "Graphics", "210 MHz"),
        (2, "SM", "210 MHz"),
        (2, "Memory", "405 MHz"),
        (2, "Video", "1185 MHz"),
        (1, "Applications Clocks"),
        (2, "Graphics", "2520 MHz"),
        (2, "Memory", "9001 MHz"),
        (1, "Default Applications Clocks"),
        (2, "Graphics", "2520 MHz"),
        (2, "Memory", "9001 MHz"),
        (1, "Deferred Clocks"),
        (2, "Memory", "N/A"),
        (1, "Max Clocks"),
        (2, "Graphics", "2520 MHz"),
        (2, "SM", "2520 MHz"),
        (2, "Memory", "9001 MHz"),
        (2, "Video", "1965 MHz"),
        (1, "Max Customer Boost Clocks"),
        (2, "Graphics", "2520 MHz"),
        (1, "Clock Policy"),
        (2, "Auto Boost", "N/A"),
        (2, "Auto Boost Default", "N/A"),
        (1, "Voltage"),
        (2, "Graphics", "875.000 mV"),
        (1, "Fabric"),
        (2, "State", "N/A"),
        (2, "Status", "N/A"),
        (2, "CliqueId", "N/A"),
        (2, "ClusterUUID", "N/A"),
        (2, "Health"),
        (3, "Bandwidth", "N/A"),
        (1, "Processes", "None"),
    ]


def log(node, gpus: list, display: set[str]) -> str:
    """The whole log, or with -d only the sections of those display types."""
    v = node.versions
    shown = {name for t in display for name in SECTIONS.get(t, [])}
    out = [
        "",
        "==============NVSMI LOG==============",
        "",
        _line(0, "Timestamp", time.strftime("%a %b %d %H:%M:%S %Y")),
        _line(0, "Driver Version", v["driver"]),
        _line(0, "CUDA Version", v["cuda"]),
        "",
        _line(0, "Attached GPUs", str(len(node.gpus))),
    ]
    for gpu in gpus:
        out.append(f"GPU 00000000:{gpu.bus.upper()}")
        keep = not display
        for r in _gpu(node, gpu):
            if display and r[0] == 1:
                keep = r[1] in shown
            if keep:
                out.append(_line(*r))
        out.append("")
    return "\n".join(out) + "\n"


def query(ctx: Ctx, args: list[str], io) -> int:
    """nvidia-smi -q [-i INDEX|BUSID] [-d TYPE[,TYPE...]]"""
    node = ctx.node
    gpus, display, i = list(node.gpus), set(), 0
    while i < len(args):
        a = args[i]
        if a in ("-i", "--id") and i + 1 < len(args):
            wanted = args[i + 1]
            gpus = [g for g in gpus if str(g.index) == wanted or wanted.upper().endswith(g.bus.upper())]
            if not gpus:
                io.out.write("No devices were found\n")
                return 6
            i += 2
            continue
        if a in ("-d", "--display") and i + 1 < len(args):
            display |= {t.strip().upper() for t in args[i + 1].split(",") if t.strip()}
            i += 2
            continue
        if a.startswith("--display="):
            display |= {t.strip().upper() for t in a.split("=", 1)[1].split(",") if t.strip()}
        i += 1
    bad = display - DISPLAY_TYPES
    if bad:
        io.err.write(
            f'"{",".join(sorted(bad))}" is not a valid display type. Use --help for more information.\n'
        )
        return 2
    io.out.write(log(node, gpus, display))
    return 0
