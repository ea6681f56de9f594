"""Processes that outlive the SSH session that started them: `setsid -f CMD`
runs CMD as a job of the machine (not of the session's shell), with a pid of
its own that `$$`, `kill -0 PID` and `kill -- -PID` see; `sh FILE` / `sh -c
TEXT` run a script in a child shell; `mv` renames a file or a directory.
A reboot ends every job (the lab's node goes down)."""

from __future__ import annotations

import asyncio
import itertools
import shlex

from ..shell.io import Buffer, Io, Stdin
from ..vfs import FsError
from .base import Ctx, split_opts

_PIDS = itertools.count(31000)


async def _run_script(ctx: Ctx, src: str, io, pid: int | None = None) -> int:
    from ..shell.interp import Shell

    child = Shell(ctx.machine, dict(ctx.shell.vars))
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


def setsid(ctx: Ctx, args, io) -> int:
    opts, rest = split_opts(args)
    if not rest:
        io.err.write("setsid: no command specified\n")
        return 1
    pid = next(_PIDS)
    jobs = ctx.machine.detached

    async def job() -> None:
        try:
            await _run_script(ctx, shlex.join(rest), Io(Stdin(""), Buffer(), Buffer()), pid=pid)
        finally:
            jobs.pop(pid, None)
            ctx.machine.changed()

    jobs[pid] = asyncio.get_running_loop().create_task(job())
    return 0


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


COMMANDS = {"sh": sh, "bash": sh, "setsid": setsid, "kill": kill}
