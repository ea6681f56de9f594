"""Processes that outlive the SSH session that started them: `setsid -f CMD`
runs CMD as a job of the machine (not of the session's shell), with a pid of
its own that `$$`, `kill -0 PID` and `kill -- -PID` see; `sh FILE` / `sh -c
TEXT` run a script in a child shell; `mv` renames a file or a directory.
`systemd-run --unit=NAME [--user] [--collect] CMD` runs CMD as a transient
service unit where systemd is PID 1 (the scenario fault `no_systemd` takes it
away); `systemctl show/is-active/stop NAME` see it (services.py asks here).
A reboot ends every job (the lab's node goes down)."""

from __future__ import annotations

import asyncio
import itertools
import shlex
import uuid
from dataclasses import dataclass

from ..shell.io import Buffer, Io, Stdin
from ..vfs import FsError
from .base import Ctx

_PIDS = itertools.count(31000)


async def _run_script(ctx: Ctx, src: str, io, pid: int | None = None, env: dict | None = None) -> int:
    from ..shell.interp import Shell

    child = Shell(ctx.machine, {**ctx.shell.vars, **env} if env else ctx.shell.vars)  # the Shell copies them
    child.pid = pid if pid is not None else getattr(ctx.shell, "pid", 4242)
    return await child.run(src, io)


async def sh(ctx: Ctx, args, io) -> int:
    if args[:1] == ["-c"] and len(args) > 1:
        return await _run_script(ctx, args[1], io)
    if not args:
        return await _run_script(ctx, io.stdin.read_all(), io)
    try:
        src = ctx.read(args[0])
    except FsError as exc:
        io.err.write(f"sh: {args[0]}: {exc}\n")
        return 127
    return await _run_script(ctx, src, io)


async def setsid(ctx: Ctx, args, io) -> int:
    """`setsid [-f] [-w] CMD`: CMD as a job of the machine, in a session (and process
    group) of its own whose id is its pid. `-w` (util-linux --wait) waits for it and
    returns its exit status, its output going where setsid's goes; the job still
    outlives the SSH session (a killed client leaves it running, as on a node)."""
    i, wait = 0, False
    while i < len(args) and args[i].startswith("-") and args[i] != "-":
        if args[i] == "--":
            i += 1
            break
        if args[i] in ("-w", "--wait"):
            wait = True
        elif args[i] not in ("-f", "--fork", "-c", "--ctty"):
            io.err.write(f"setsid: invalid option -- '{args[i].lstrip('-')}'\n")
            return 1
        i += 1
    rest = args[i:]
    if not rest:
        io.err.write("setsid: no command specified\n")
        return 1
    pid = next(_PIDS)
    jobs = ctx.machine.detached
    # without -w the job's output goes nowhere (setsid -f < /dev/null > /dev/null)
    job_io = io if wait else Io(Stdin(""), Buffer(), Buffer())

    async def job() -> int:
        try:
            return await _run_script(ctx, shlex.join(rest), job_io, pid=pid)
        finally:
            jobs.pop(pid, None)
            ctx.machine.changed()

    task = jobs[pid] = asyncio.get_running_loop().create_task(job())
    if not wait:
        return 0
    # the waiting setsid may go (its session closed) without taking the job along
    await asyncio.wait({task})
    if task.cancelled():
        return 128 + 15  # ended by kill (commands/jobs.py kill): the shell's 128+SIGTERM
    return task.result()


def kill(ctx: Ctx, args, io) -> int:
    signal0 = "-0" in args
    targets = [a for a in args if a.lstrip("-").isdigit() and a != "-0"]
    status = 0
    for t in targets:
        pid = int(t.lstrip("-"))
        task = ctx.machine.detached.get(pid)
        if task is None or task.done():
            io.err.write(f"bash: kill: ({t}) - No such process\n")
            status = 1
        elif not signal0:
            task.cancel()
    return status


@dataclass
class TransientUnit:
    """A unit systemd-run made: systemd's view of it for `systemctl show`."""

    name: str
    pid: int
    task: object = None
    collect: bool = False
    active: bool = True
    result: str = "success"  # success | exit-code | signal
    status: int = 0  # ExecMainStatus


_RUN_VALUE_OPTS = ("-p", "--property", "-E", "--setenv", "--description", "--working-directory", "--slice")


def systemd_run(ctx: Ctx, args, io) -> int:
    name, collect, quiet, env = None, False, False, {}
    i = 0
    while i < len(args) and args[i].startswith("-"):
        a = args[i]
        key, eq, value = a.partition("=")
        if a == "--":
            i += 1
            break
        if key in ("--unit", "-u") or key in _RUN_VALUE_OPTS:
            if not eq:
                i += 1
                value = args[i] if i < len(args) else ""
            if key in ("--unit", "-u"):
                name = value
            elif key in ("-E", "--setenv") and "=" in value:
                k, _, v = value.partition("=")
                env[k] = v
        elif a in ("--collect", "-G"):
            collect = True
        elif a in ("--quiet", "-q"):
            quiet = True
        elif a not in ("--user", "--system", "--no-block"):
            io.err.write(f"systemd-run: unrecognized option '{a}'\n")
            return 1
        i += 1
    rest = args[i:]
    if not rest:
        io.err.write("systemd-run: Command line to execute required.\n")
        return 1
    unit = name if name and name.endswith(".service") else f"{name or 'run-u' + str(next(_PIDS))}.service"
    units = ctx.machine.units
    if unit in units:
        io.err.write(
            "Failed to start transient service unit: "
            f"Unit {unit} was already loaded or has a fragment file.\n"
        )
        return 1
    pid = next(_PIDS)
    record = units[unit] = TransientUnit(unit, pid, collect=collect)
    jobs = ctx.machine.detached

    async def job() -> None:
        status = None
        try:
            status = await _run_script(
                ctx, shlex.join(rest), Io(Stdin(""), Buffer(), Buffer()), pid=pid, env=env
            )
        finally:
            jobs.pop(pid, None)
            record.active = False
            if status is None:
                record.result, record.status = "signal", 15
            elif status:
                record.result, record.status = "exit-code", status
            if record.collect or record.result == "success":  # a transient unit is unloaded once inactive
                units.pop(unit, None)
            ctx.machine.changed()

    record.task = jobs[pid] = asyncio.get_running_loop().create_task(job())
    if not quiet:
        io.err.write(f"Running as unit: {unit}; invocation ID: {uuid.uuid4().hex}\n")
    return 0


def transient(ctx: Ctx, name: str) -> TransientUnit | None:
    return ctx.machine.units.get(name if name.endswith(".service") else f"{name}.service")


async def stop_transient(ctx: Ctx, unit: TransientUnit) -> int:
    """`systemctl stop`: SIGTERM to the unit's processes, and wait until they are gone."""
    task = unit.task
    if unit.active and task is not None and not task.done():
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
    ctx.machine.units.pop(unit.name, None)
    return 0


COMMANDS = {"sh": sh, "bash": sh, "setsid": setsid, "kill": kill, "systemd-run": systemd_run}
ONLY_ON = {"systemd-run": lambda m: m.state.platform.systemd}
