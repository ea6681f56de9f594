"""mlxfwreset -d DEV [-l LEVEL] [-y] reset|r: reset the adapter's firmware so
the configuration set for the next boot (mlxconfig set) is loaded now - the
only way short of a power cycle when a warm reboot does not reset the card.
Output as the real tool prints it (level 3: driver restart and PCI reset)."""

from __future__ import annotations

from .base import Ctx
from .mlxconfig import _resolve


def mlxfwreset(ctx: Ctx, args, io) -> int:
    dev, level, yes, command, i = None, None, False, None, 0
    while i < len(args):
        a = args[i]
        if a in ("-d", "--device") and i + 1 < len(args):
            dev, i = args[i + 1], i + 2
            continue
        if a in ("-l", "--level") and i + 1 < len(args):
            level, i = args[i + 1], i + 2
            continue
        if a.startswith("-l") and len(a) > 2:
            level = a[2:]
        elif a in ("-y", "--yes"):
            yes = True
        elif a in ("reset", "r", "query", "q"):
            command = a
        i += 1
    if dev is None or command is None:
        io.err.write("-E- Missing device or command: mlxfwreset -d <device> [-l <level>] [-y] reset|query\n")
        return 1
    card = _resolve(ctx.node, dev)
    if card is None:
        io.err.write(f"-E- Failed to open device: {dev}, No such file or directory\n")
        return 1
    if command in ("query", "q"):
        io.out.write(
            'Reset-levels:\n0: Driver, PCI link, network link will remain up ("live-Patch")  -Supported\n'
            "3: Driver restart and PCI reset                                  -Supported  (default)\n"
            "4: Warm Reboot                                                  -Supported\n"
        )
        return 0
    if level not in (None, "3"):
        io.err.write(f"-E- Reset level {level} is not simulated (only 3: Driver restart and PCI reset)\n")
        return 1
    io.out.write(f"\nMinimal reset level for device, {dev}:\n\n3: Driver restart and PCI reset\n")
    if not yes:
        io.out.write("Continue with reset?[y/N] n\n-E- Aborted by user\n")
        return 1
    io.out.write(
        "Continue with reset?[y/N] y\n"
        "-I- Sending Reset Command To Fw             -Done\n"
        "-I- Stopping Driver                         -Done\n"
        "-I- Resetting PCI                           -Done\n"
        "-I- Starting Driver                         -Done\n"
        "-I- Restarting MST                          -Done\n"
        "-I- FW was loaded successfully.\n"
    )
    card.link_type = list(card.link_type_next)
    ctx.cluster.fabric.rebuild_ports()
    ctx.machine.changed()
    return 0


COMMANDS = {"mlxfwreset": mlxfwreset}
