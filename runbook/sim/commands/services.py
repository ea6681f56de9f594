"""Services and kernel modules: systemctl, reboot, modprobe, lsmod, modinfo."""
from __future__ import annotations

import time

from .base import Ctx, split_opts

ALWAYS_ACTIVE = {"sshd", "chronyd", "openibd", "crond", "rsyslog"}
KNOWN_MODULES = {"mlx5_core", "mlx5_ib", "ib_ipoib", "ib_umad", "ib_core", "nvidia", "nvidia_uvm",
                 "nvidia_peermem", "nvidia_drm", "nvidia_modeset", "mst_pci", "mst_pciconf"}
SIZES = {"nvidia_peermem": 16384, "nvidia_uvm": 1523712, "nvidia": 54173696, "mlx5_ib": 471040,
         "mlx5_core": 2338816, "ib_ipoib": 159744, "ib_umad": 40960, "ib_core": 458752}


def _unit(name: str) -> str:
    return name[:-8] if name.endswith(".service") else name


def _has_unit(ctx: Ctx, unit: str) -> bool:
    if unit == "opensm":
        return ctx.node.kind == "sm"
    if unit == "nvidia-persistenced":
        return bool(ctx.node.gpus)
    return unit in ALWAYS_ACTIVE


def _active(ctx: Ctx, unit: str) -> bool:
    if unit == "opensm":
        return ctx.node.kind == "sm" and ctx.node.opensm.running
    return _has_unit(ctx, unit)


def systemctl(ctx: Ctx, args, io) -> int:
    opts, rest = split_opts(args)
    if not rest:
        io.err.write("systemctl: only is-active/is-enabled/start/stop/restart/enable/disable/status/reboot\n")
        return 1
    verb, units = rest[0], [_unit(u) for u in rest[1:]]
    if verb == "reboot":
        ctx.machine.request_reboot()
        return 0
    if verb == "is-active":
        status = 0
        for u in units:
            active = _active(ctx, u)
            if not opts.get("q") and not opts.get("--quiet"):
                io.out.write("active\n" if active else "inactive\n")
            status = status or (0 if active else 3)
        return status
    if verb == "is-enabled":
        status = 0
        for u in units:
            if not _has_unit(ctx, u):
                io.err.write(f"Failed to get unit file state for {u}.service: No such file or directory\n")
                status = 1
                continue
            enabled = ctx.node.opensm.enabled if u == "opensm" else True
            io.out.write("enabled\n" if enabled else "disabled\n")
            status = status or (0 if enabled else 1)
        return status
    if verb in ("kill", "reload"):  # OpenSM re-reads partitions.conf on HUP; the sim always does
        for u in units:
            if not _active(ctx, u):
                io.err.write(f"Failed to {verb} unit {u}.service: Unit {u}.service not loaded.\n")
                return 1
        return 0
    if verb in ("start", "stop", "restart", "enable", "disable", "status"):
        for u in units:
            if not _has_unit(ctx, u):
                word = {"start": "start", "stop": "stop", "restart": "restart"}.get(verb)
                if verb == "status":
                    io.err.write(f"Unit {u}.service could not be found.\n")
                    return 4
                io.err.write(f"Failed to {word or verb} {u}.service: Unit {u}.service not found.\n")
                return 5 if word else 1
            if verb == "status":
                return _status(ctx, u, io)
            if u == "opensm":
                _opensm(ctx, verb, bool(opts.get("--now")), io)
        return 0
    io.err.write(f'Unknown command verb {verb}.\n')
    return 1


def _opensm(ctx: Ctx, verb: str, now: bool, io) -> None:
    sm = ctx.node.opensm
    if verb in ("enable", "disable"):
        sm.enabled = verb == "enable"
        link = "/etc/systemd/system/multi-user.target.wants/opensm.service"
        if sm.enabled:
            io.err.write(f"Created symlink {link} \u2192 /usr/lib/systemd/system/opensm.service.\n")
        else:
            io.err.write(f"Removed \"{link}\".\n")
        if not now:
            ctx.machine.changed()
            return
        verb = "start" if sm.enabled else "stop"
    if verb in ("start", "restart") and (verb == "restart" or not sm.running):
        sm.running = True
        sm.started_at = time.time()
    elif verb == "stop":
        sm.running = False
    ctx.machine.changed()


def _status(ctx: Ctx, unit: str, io) -> int:
    active = _active(ctx, unit)
    since = time.strftime("%a %Y-%m-%d %H:%M:%S UTC", time.gmtime(ctx.node.opensm.started_at or ctx.node.booted_at))
    enabled = ctx.node.opensm.enabled if unit == "opensm" else True
    io.out.write(f"\u25cf {unit}.service - {unit}\n"
                 f"     Loaded: loaded (/usr/lib/systemd/system/{unit}.service; "
                 f"{'enabled' if enabled else 'disabled'}; preset: disabled)\n"
                 + (f"     Active: active (running) since {since}\n" if active else
                    "     Active: inactive (dead)\n"))
    return 0 if active else 3


def reboot(ctx: Ctx, args, io) -> int:
    ctx.machine.request_reboot()
    return 0


def shutdown(ctx: Ctx, args, io) -> int:
    if "-r" in args:
        ctx.machine.request_reboot()
        return 0
    io.err.write("shutdown: only 'shutdown -r' is simulated (a powered-off node cannot come back)\n")
    return 1


def modprobe(ctx: Ctx, args, io) -> int:
    opts, mods = split_opts(args)
    node = ctx.node
    kernel = node.versions["kernel"]
    for m in mods:
        name = m.replace("-", "_")
        if name not in KNOWN_MODULES or (name.startswith("nvidia") and not node.gpus):
            io.err.write(f"modprobe: FATAL: Module {m} not found in directory /lib/modules/{kernel}\n")
            return 1
        if opts.get("r"):
            if name in node.modules:
                node.modules.remove(name)
        elif name not in node.modules:
            node.modules.append(name)
    ctx.machine.changed()
    return 0


def lsmod(ctx: Ctx, args, io) -> int:
    io.out.write("Module                  Size  Used by\n")
    loaded = set(ctx.node.modules)
    users = {}
    for mod, deps in (("nvidia", ["nvidia_uvm", "nvidia_peermem"]), ("mlx5_core", ["mlx5_ib"])):
        on = [d for d in deps if d in loaded]
        users[mod] = f"{len(on)} {','.join(on)}".strip()
    for m in sorted(ctx.node.modules, key=lambda x: (x.startswith("mlx"), x), reverse=True):
        io.out.write(f"{m:<19} {SIZES.get(m, 65536):>8}  {users.get(m, '0')}\n")
    return 0


def modinfo(ctx: Ctx, args, io) -> int:
    from .modinfo_text import describe

    opts, mods = split_opts(args, with_value="F")
    if not mods:
        io.err.write("modinfo: ERROR: missing module or filename.\n")
        return 1
    status = 0
    for m in mods:
        fields = describe(ctx.node, m.replace("-", "_"))
        if fields is None:
            io.err.write(f"modinfo: ERROR: Module {m} not found.\n")
            status = 1
            continue
        if "F" in opts:
            io.out.write("".join(v + "\n" for k, v in fields if k == opts["F"]))
            continue
        io.out.write("".join(f"{k + ':':<16}{v}\n" for k, v in fields))
    return status


COMMANDS = {"systemctl": systemctl, "reboot": reboot, "shutdown": shutdown, "modprobe": modprobe,
            "lsmod": lsmod, "modinfo": modinfo}
