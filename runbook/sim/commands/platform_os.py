"""OS and platform settings of a simulated node: ulimit (the locked-memory limit
pam_limits gives an SSH session), tuned-adm, grubby (the kernel command line of
the next boot), setpci (the ACS control register of the PCIe switch ports) and
ping (over the storage IPoIB interface)."""

from __future__ import annotations

import ipaddress
import shlex

from ..pcidevices import devices
from ..platform import DEFAULT_MEMLOCK_KB, storage_targets
from .base import Ctx
from .mst import netdev_name

TUNED_PROFILES = (
    "accelerator-performance",
    "balanced",
    "desktop",
    "hpc-compute",
    "latency-performance",
    "network-latency",
    "network-throughput",
    "powersave",
    "throughput-performance",
    "virtual-guest",
    "virtual-host",
)
ACS_REG = {"ECAP_ACS+0x6.w", "ECAP_ACS+6.w", "ECAP_ACS+0x06.w", "ecap_acs+6.w", "ECAP0D+6.w"}


# ---- ulimit ----------------------------------------------------------------------------
def memlock(ctx: Ctx) -> tuple[str, str]:
    """(soft, hard) for the session user, as pam_limits reads limits.conf then limits.d/*.conf in
    order, the last entry winning. limits.conf(5): wildcard and group lines do not apply to root."""
    user = "root"
    soft = hard = str(DEFAULT_MEMLOCK_KB)
    fs = ctx.fs
    paths = ["/etc/security/limits.conf"] + [p for p in fs.glob("/etc/security/limits.d/*.conf")]
    for path in paths:
        if not fs.isfile(path):
            continue
        for line in fs.read(path).splitlines():
            words = line.split("#", 1)[0].split()
            if len(words) < 4 or words[2] != "memlock":
                continue
            domain, kind, value = words[0], words[1], words[3]
            if not (domain == user or (user != "root" and (domain == "*" or domain.startswith(("@", "%"))))):
                continue
            value = "unlimited" if value in ("unlimited", "infinity", "-1") else value
            if kind in ("soft", "-"):
                soft = value
            if kind in ("hard", "-"):
                hard = value
    return soft, hard


def ulimit(ctx: Ctx, args, io) -> int:
    hard = any("H" in a for a in args if a.startswith("-"))
    if not any("l" in a for a in args if a.startswith("-")):
        io.out.write("unlimited\n")  # the file-size limit (`ulimit` without options)
        return 0
    soft_value, hard_value = memlock(ctx)
    io.out.write((hard_value if hard else soft_value) + "\n")
    return 0


# ---- tuned-adm -------------------------------------------------------------------------
def tuned_adm(ctx: Ctx, args, io) -> int:
    p = ctx.node.platform
    if args[:1] == ["active"]:
        io.out.write(
            f"Current active profile: {p.tuned_profile}\n"
            if p.tuned_profile
            else "No current active profile.\n"
        )
        return 0
    if args[:1] == ["list"]:
        io.out.write(
            "Available profiles:\n"
            + "".join(f"- {name}\n" for name in TUNED_PROFILES)
            + (f"Current active profile: {p.tuned_profile}\n" if p.tuned_profile else "")
        )
        return 0
    if args[:1] == ["verify"]:
        if not p.tuned_profile:
            io.out.write("Cannot verify profile, no profile is active.\n")
            return 1
        io.out.write(
            "Verification succeeded, current system settings match the preset profile.\n"
            "See TuneD log file ('/var/log/tuned/tuned.log') for details.\n"
        )
        return 0
    if args[:1] == ["off"]:
        p.tuned_profile = ""
        ctx.machine.changed()
        return 0
    if args[:1] == ["profile"] and len(args) == 2:
        if args[1] not in TUNED_PROFILES:
            io.err.write(f"Requested profile '{args[1]}' doesn't exist.\n")
            return 1
        p.tuned_profile = args[1]
        ctx.machine.changed()
        return 0
    io.err.write(
        "usage: tuned-adm [-h] [--version] [--debug] [--async] [--timeout TIMEOUT] "
        "{list,active,off,profile,recommend,verify,auto_profile,profile_mode} ...\n"
    )
    return 2


# ---- grubby ----------------------------------------------------------------------------
def _split_args(line: str) -> tuple[str, list[str]]:
    """'BOOT_IMAGE=... root=... ro a b' -> (the BOOT_IMAGE word, the other arguments)."""
    words = line.split()
    head = [w for w in words if w.startswith("BOOT_IMAGE=")]
    return (head[0] if head else ""), [w for w in words if not w.startswith("BOOT_IMAGE=")]


def grubby(ctx: Ctx, args, io) -> int:
    node = ctx.node
    p = node.platform
    opts = {}
    for a in args:
        key, _, value = a.partition("=")
        opts[key] = value
    head, current = _split_args(p.kernel_args_next)
    kernel = f"/boot/vmlinuz-{node.versions['kernel']}"
    if "--info" in opts:
        io.out.write(
            f'index=0\nkernel="{kernel}"\nargs="{" ".join(w for w in current if not w.startswith("root="))}"\n'
            'root="/dev/mapper/rl-root"\n'
            f'initrd="/boot/initramfs-{node.versions["kernel"]}.img"\n'
            f'title="{node.versions["os_release"].split(" (")[0]} ({node.versions["kernel"]})"\n'
        )
        return 0
    if "--update-kernel" not in opts:
        io.err.write("grubby: no action specified\n")
        return 1
    if opts["--update-kernel"] not in ("ALL", "DEFAULT", kernel):
        io.err.write(f"grubby: The param {opts['--update-kernel']} is incorrect\n")
        return 1
    remove = shlex.split(opts.get("--remove-args", ""))
    add = shlex.split(opts.get("--args", ""))
    keys = {w.split("=", 1)[0] for w in add}
    kept = [w for w in current if w not in remove and w.split("=", 1)[0] not in keys]
    p.kernel_args_next = " ".join([head] + kept + add)
    ctx.machine.changed()
    return 0


# ---- setpci ----------------------------------------------------------------------------
def setpci(ctx: Ctx, args, io) -> int:
    node = ctx.node
    bdf = reg = None
    rest = []
    i = 0
    while i < len(args):
        if args[i] == "-s" and i + 1 < len(args):
            bdf = args[i + 1]
            i += 2
            continue
        if args[i] not in ("-v", "-D"):
            rest.append(args[i])
        i += 1
    if bdf is None or not rest:
        io.err.write("setpci: No devices selected.\n" if bdf is None else "setpci: Missing operation.\n")
        return 1
    bdf = bdf.lower().removeprefix("0000:")
    bridges = {d.bus for d in devices(node) if d.kind == "bridge"}
    if bdf not in {d.bus for d in devices(node)}:
        io.err.write('setpci: Warning: No devices selected for "' + rest[0] + '".\n')
        return 0
    for op in rest:
        reg, eq, value = op.partition("=")
        if reg not in ACS_REG:
            io.err.write(f'setpci: Unknown register "{reg}".\n')
            return 1
        if bdf not in bridges:
            io.err.write(f"setpci: Extended capability 0xd not found for {bdf}\n")
            return 1
        if eq:
            try:
                node.platform.acs_ctl[bdf] = int(value, 16) & 0x7F
            except ValueError:
                io.err.write(f'setpci: Invalid value "{value}".\n')
                return 1
            ctx.machine.changed()
        else:
            io.out.write(f"{node.platform.acs(bdf):04x}\n")
    return 0


# ---- ping ------------------------------------------------------------------------------
def _interface(ctx: Ctx, name: str):
    """The NIC behind an interface name; an IPoIB child (ib4.8200) sends through
    its parent's port."""
    node = ctx.node
    name = next((c.parent for c in node.ipoib_children if c.name == name), name)
    for nic in node.nics:
        if netdev_name(node, nic) == name:
            return nic
    return None


def ping(ctx: Ctx, args, io) -> int:
    node = ctx.node
    count, iface, target = 4, None, None
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-c", "-W", "-I", "-i", "-w", "-s") and i + 1 < len(args):
            if a == "-c":
                count = int(args[i + 1]) if args[i + 1].isdigit() else count
            elif a == "-I":
                iface = args[i + 1]
            i += 2
            continue
        if not a.startswith("-"):
            target = a
        i += 1
    if target is None:
        io.err.write("ping: usage error: Destination address required\n")
        return 2
    try:
        ipaddress.ip_address(target)
    except ValueError:
        io.err.write(f"ping: {target}: Name or service not known\n")
        return 2
    storage_if = str(ctx.cluster.design.var("storage_ipoib_if", "ib4"))
    source = node.storage_ip if iface in (None, storage_if) else ""
    nic = _interface(ctx, iface) if iface else None
    if iface and nic is None:
        io.err.write(f"ping: SO_BINDTODEVICE {iface}: No such device\n")
        return 2
    up = nic is None or (
        ctx.fabric.status(node, nic).state == "Active" and ctx.fabric.status(node, nic).layer == "InfiniBand"
    )
    targets = {t["address"] for t in storage_targets(ctx.cluster.design)}
    answers = up and target in targets and target not in node.platform.storage_unreachable
    via = f" from {source} {iface}" if iface else ""
    io.out.write(f"PING {target} ({target}){via}: 56(84) bytes of data.\n")
    if answers:
        for seq in range(1, count + 1):
            io.out.write(f"64 bytes from {target}: icmp_seq={seq} ttl=64 time=0.0{70 + seq % 9} ms\n")
    else:
        for seq in range(1, count + 1):
            io.out.write(f"From {source or '0.0.0.0'} icmp_seq={seq} Destination Host Unreachable\n")
    received = count if answers else 0
    io.out.write(f"\n--- {target} ping statistics ---\n")
    loss = 0 if answers else 100
    errors = "" if answers else f", +{count} errors"
    io.out.write(
        f"{count} packets transmitted, {received} received{errors}, {loss}% packet loss, "
        f"time {1000 * (count - 1) + 41}ms\n"
    )
    if answers:
        io.out.write("rtt min/avg/max/mdev = 0.071/0.075/0.079/0.003 ms\n")
    return 0 if answers else 1


COMMANDS = {"ulimit": ulimit, "tuned-adm": tuned_adm, "grubby": grubby, "setpci": setpci, "ping": ping}
