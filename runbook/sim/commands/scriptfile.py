"""sh / bash running a script file (`sh FILE`, `/bin/sh FILE`) or a string
(`sh -c 'LINE'`) in a fresh shell of the same node: how a boot-time unit's
ExecStart or a generated script is run."""
from __future__ import annotations

from .base import Ctx


async def sh(ctx: Ctx, args, io) -> int:
    from ..shell.interp import Shell

    if args[:1] == ["-c"] and len(args) > 1:
        text, name = args[1], "-c"
    elif args and not args[0].startswith("-"):
        name = args[0]
        try:
            text = ctx.read(name)
        except Exception as exc:  # FsError: No such file or directory
            io.err.write(f"sh: {name}: {exc}\n")
            return 127
    else:
        io.err.write("sh: only `sh FILE` and `sh -c LINE` are simulated\n")
        return 2
    return await Shell(ctx.machine).run(text, io)


COMMANDS = {"sh": sh, "bash": sh}
