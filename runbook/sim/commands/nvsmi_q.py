"""The settings of nvidia-smi (-pm / -pl / -e) and the --query-gpu fields that read
the GPU-health state of the simulated L40S (platform.py); `nvidia-smi -q` itself
is nvidia_smi_q.py. Helpers of nvidia_smi.py."""

from __future__ import annotations

from .base import Ctx


def reason_hex(bits: int) -> str:
    return f"0x{bits:016x}"


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
        io.err.write(
            f"Provided power limit {watts:.2f} W is not a valid power limit which should be "
            "between 100.00 W and 350.00 W for GPU 00000000:"
            f"{node.gpus[targets[0]].bus.upper()}\n"
            "Terminating early due to previous errors.\n"
        )
        return 2
    for t in targets:
        health = node.platform.gpus[t]
        old = health.power_limit_w
        health.power_limit_w = watts
        io.out.write(
            f"Power limit for GPU 00000000:{node.gpus[t].bus.upper()} was set to {watts:.2f} W "
            f"from {old:.2f} W.\n"
        )
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
