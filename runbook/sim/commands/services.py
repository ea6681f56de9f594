"""Services and kernel modules: systemctl, reboot, modprobe, lsmod, modinfo."""

from __future__ import annotations

import time

from . import jobs
from .base import Ctx, split_opts

ALWAYS_ACTIVE = {"sshd", "chronyd", "openibd", "crond", "rsyslog"}
KNOWN_MODULES = {
    "mlx5_core",
    "mlx5_ib",
    "ib_ipoib",
    "ib_umad",
    "ib_core",
    "nvidia",
    "nvidia_uvm",
    "nvidia_peermem",
    "nvidia_drm",
    "nvidia_modeset",
    "mst_pci",
    "mst_pciconf",
}
SIZES = {
    "nvidia_peermem": 16384,
    "nvidia_uvm": 1523712,
    "nvidia": 54173696,
    "mlx5_ib": 471040,
    "mlx5_core": 2338816,
    "ib_ipoib": 159744,
    "ib_umad": 40960,
    "ib_core": 458752,
}


def _unit(name: str) -> str:
    return name[:-8] if name.endswith(".service") else name


# MLNX_OFED installs OpenSM's unit as `opensmd` (distributions ship `opensm`):
# the simulated SM nodes run MLNX_OFED, so only `opensmd` exists there.
OPENSM_UNIT = "opensmd"


def _service(ctx: Ctx, unit: str):
    """The node's record of a stateful unit (enabled/running), or None."""
    if unit == OPENSM_UNIT and ctx.node.kind == "sm":
        return ctx.node.opensm
    if unit == "irqbalance":  # installed and enabled on every RHEL node by default
        return ctx.node.irqbalance
    return None


def _custom(ctx: Ctx, unit: str) -> bool:
    """A unit file the administrator installed in /etc/systemd/system."""
    return f"/etc/systemd/system/{unit}.service" in ctx.node.files


def _has_unit(ctx: Ctx, unit: str) -> bool:
    if _service(ctx, unit) is not None or _custom(ctx, unit):
        return True
    if unit == "nvidia-persistenced":
        return bool(ctx.node.gpus)
    return unit in ALWAYS_ACTIVE


def _active(ctx: Ctx, unit: str) -> bool:
    svc = _service(ctx, unit)
    if svc is None and _custom(ctx, unit):  # oneshot, RemainAfterExit: active once run at boot
        return unit in ctx.node.units_enabled
    return svc.running if svc is not None else _has_unit(ctx, unit)


def _enabled(ctx: Ctx, unit: str) -> bool:
    svc = _service(ctx, unit)
    if svc is None and _custom(ctx, unit):
        return unit in ctx.node.units_enabled
    return svc.enabled if svc is not None else True


def systemctl(ctx: Ctx, args, io) -> int:
    opts, rest = split_opts(args, with_value="p")
    props = [a.split("=", 1)[1] for a in args if a.startswith("--property=")]
    for i, a in enumerate(args):
        if a in ("-p", "--property") and i + 1 < len(args):
            props.append(args[i + 1])
        elif a.startswith("-p") and len(a) > 2:
            props.append(a[2:])
    if not rest:
        io.err.write(
            "systemctl: only is-active/is-enabled/start/stop/restart/enable/disable/status/show/reboot\n"
        )
        return 1
    verb, units = rest[0], [_unit(u) for u in rest[1:]]
    made = [jobs.transient(ctx, u) for u in units]
    if verb in ("stop", "is-active") and units and all(made):  # units systemd-run made (jobs.py)
        if verb == "stop":
            return _stop_all(ctx, made)
        if not opts.get("q") and not opts.get("--quiet"):
            io.out.write("".join("active\n" if t.active else "failed\n" for t in made))
        return 0 if all(t.active for t in made) else 3
    if verb == "reboot":
        ctx.machine.request_reboot()
        return 0
    if verb == "show":
        return _show(ctx, units, [p for x in props for p in x.split(",") if p], io)
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
            enabled = _enabled(ctx, u)
            io.out.write("enabled\n" if enabled else "disabled\n")
            status = status or (0 if enabled else 1)
        return status
    if verb == "daemon-reload":
        return 0
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
            svc = _service(ctx, u)
            if svc is not None:
                _change(ctx, svc, u, verb, bool(opts.get("--now")), io)
            elif _custom(ctx, u) and verb in ("enable", "disable"):
                on = ctx.node.units_enabled
                if verb == "enable" and u not in on:
                    on.append(u)
                    io.err.write(
                        f"Created symlink /etc/systemd/system/multi-user.target.wants/{u}.service"
                        f" \u2192 /etc/systemd/system/{u}.service.\n"
                    )
                elif verb == "disable" and u in on:
                    on.remove(u)
                    io.err.write(f'Removed "/etc/systemd/system/multi-user.target.wants/{u}.service".\n')
                ctx.machine.changed()
        return 0
    io.err.write(f"Unknown command verb {verb}.\n")
    return 1


async def _stop_all(ctx: Ctx, made) -> int:
    for t in made:
        await jobs.stop_transient(ctx, t)
    return 0


def _show(ctx: Ctx, units: list[str], props: list[str], io) -> int:
    """`systemctl show [-p P]... UNIT`: Property=value in systemd's own order
    (MainPID and Result come before ExecMainStatus, Id and the states)."""
    for k, u in enumerate(units):
        made = jobs.transient(ctx, u)
        known = made is not None or _has_unit(ctx, u)
        active = made.active if made is not None else known and _active(ctx, u)
        failed = made is not None and not made.active
        values = {
            "MainPID": str(made.pid if made is not None and active else 0),
            "Result": made.result if made is not None else "success",
            "ExecMainStatus": str(made.status if made is not None else 0),
            "Id": f"{u}.service",
            "LoadState": "loaded" if known else "not-found",
            "ActiveState": "active" if active else "failed" if failed else "inactive",
            "SubState": "running" if active else "failed" if failed else "dead",
            "UnitFileState": "transient"
            if made is not None
            else ("enabled" if _enabled(ctx, u) else "disabled")
            if known
            else "",
        }
        order = ["MainPID", "Result", "ExecMainStatus", "Id", "LoadState", "ActiveState", "SubState"]
        order.append("UnitFileState")
        if not props:  # the default listing keeps its former shape
            order = order[3:]
        wanted = [p for p in order if not props or p in props]
        if k:
            io.out.write("\n")
        io.out.write("".join(f"{p}={values[p]}\n" for p in wanted))
    return 0


def _change(ctx: Ctx, svc, unit: str, verb: str, now: bool, io) -> None:
    if verb in ("enable", "disable"):
        if (verb == "enable") != svc.enabled:
            link = f"/etc/systemd/system/multi-user.target.wants/{unit}.service"
            if verb == "enable":
                io.err.write(f"Created symlink {link} \u2192 /usr/lib/systemd/system/{unit}.service.\n")
            else:
                io.err.write(f'Removed "{link}".\n')
        svc.enabled = verb == "enable"
        if not now:
            ctx.machine.changed()
            return
        verb = "start" if svc.enabled else "stop"
    if verb in ("start", "restart") and (verb == "restart" or not svc.running):
        svc.running = True
        svc.started_at = time.time()
    elif verb == "stop":
        svc.running = False
    ctx.machine.changed()


DESCRIPTIONS = {
    "irqbalance": (
        "irqbalance daemon",
        ["man:irqbalance(1)", "https://github.com/Irqbalance/irqbalance"],
        "/usr/sbin/irqbalance --foreground",
    )
}


def _ago(seconds: float) -> str:
    s = int(max(0, seconds))
    if s < 60:
        return f"{s}s ago"
    h, m = s // 3600, s % 3600 // 60
    return f"{h}h {m}min ago" if h else f"{m}min {s % 60}s ago"


def _status(ctx: Ctx, unit: str, io) -> int:
    """systemd 252 (RHEL 9) layout: filled/hollow circle, Loaded with preset,
    Active with since/ago, Docs, and for a running daemon Main PID, Tasks,
    Memory, CPU, CGroup (as the real `systemctl status irqbalance` prints)."""
    active = _active(ctx, unit)
    svc = _service(ctx, unit)
    started = (svc.started_at if svc is not None else 0) or ctx.node.booted_at
    since = time.strftime("%a %Y-%m-%d %H:%M:%S UTC", time.gmtime(started))
    enabled = _enabled(ctx, unit)
    desc, docs, cmd = DESCRIPTIONS.get(unit, (unit, [], f"/usr/sbin/{unit}"))
    path = (
        f"/etc/systemd/system/{unit}.service"
        if _custom(ctx, unit)
        else f"/usr/lib/systemd/system/{unit}.service"
    )
    dot = "\u25cf" if active else "\u25cb"
    out = [
        f"{dot} {unit}.service - {desc}",
        f"     Loaded: loaded ({path}; {'enabled' if enabled else 'disabled'}; preset: enabled)",
        f"     Active: active (running) since {since}; {_ago(time.time() - started)}"
        if active
        else "     Active: inactive (dead)",
    ]
    for k, d in enumerate(docs):
        out.append(("       Docs: " if k == 0 else "             ") + d)
    if active:
        pid = 1000 + ctx.node.index * 7 + len(unit)
        out += [
            f"   Main PID: {pid} ({unit})",
            "      Tasks: 2 (limit: 1545712)",
            "     Memory: 1.1M",
            "        CPU: 1.204s",
            f"     CGroup: /system.slice/{unit}.service",
            f"             \u2514\u2500{pid} {cmd}",
        ]
    io.out.write("\n".join(out) + "\n")
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


COMMANDS = {
    "systemctl": systemctl,
    "reboot": reboot,
    "shutdown": shutdown,
    "modprobe": modprobe,
    "lsmod": lsmod,
    "modinfo": modinfo,
}
