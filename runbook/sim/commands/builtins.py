"""Shell builtins: they touch the shell itself (variables, options, jobs, exit)."""

from __future__ import annotations

import asyncio
import re

from .base import Ctx
from .testexpr import evaluate


def _exit(ctx: Ctx, args, io) -> int:
    from ..shell.interp import ExitShell

    try:
        status = int(args[0]) & 0xFF if args else ctx.shell.status
    except ValueError:
        io.err.write(f"bash: exit: {args[0]}: numeric argument required\n")
        status = 2
    raise ExitShell(status)


def _cd(ctx: Ctx, args, io) -> int:
    target = ctx.path(args[0] if args else "/root")
    if not ctx.fs.isdir(target):
        io.err.write(f"bash: cd: {args[0] if args else target}: No such file or directory\n")
        return 1
    ctx.shell.vars["PWD"] = target
    return 0


def _pwd(ctx: Ctx, args, io) -> int:
    io.out.write(ctx.shell.cwd + "\n")
    return 0


def _export(ctx: Ctx, args, io) -> int:
    for a in args:
        name, eq, value = a.partition("=")
        if eq:
            ctx.shell.vars[name] = value
    return 0


def _unset(ctx: Ctx, args, io) -> int:
    for a in args:
        ctx.shell.vars.pop(a, None)
    return 0


def _set(ctx: Ctx, args, io) -> int:
    names = {"e": "errexit", "u": "nounset", "x": "xtrace"}
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-o", "+o") and i + 1 < len(args):
            (ctx.shell.options.add if a == "-o" else ctx.shell.options.discard)(args[i + 1])
            i += 2
            continue
        if a[:1] in "-+" and len(a) > 1:
            for letter in a[1:]:
                if letter in names:
                    (ctx.shell.options.add if a[0] == "-" else ctx.shell.options.discard)(names[letter])
        i += 1
    return 0


async def _wait(ctx: Ctx, args, io) -> int:
    await ctx.shell.wait_jobs()
    return 0


def _read(ctx: Ctx, args, io) -> int:
    names = [a for a in args if not a.startswith("-")] or ["REPLY"]
    line = io.stdin.readline()
    if line is None:
        return 1
    fields = line.split(None, len(names) - 1)
    for k, name in enumerate(names):
        ctx.shell.vars[name] = fields[k] if k < len(fields) else ""
    return 0


def _command(ctx: Ctx, args, io) -> int:
    from . import lookup

    if args and args[0] in ("-v", "-V"):
        status = 0
        for name in args[1:]:
            if name in BUILTINS:
                io.out.write(f"{name}\n")
            elif lookup(name, ctx.machine):
                io.out.write(f"/usr/bin/{name}\n")
            else:
                status = 1
        return status
    io.err.write("bash: command: only -v is simulated\n")
    return 2


def _which(ctx: Ctx, args, io) -> int:
    from . import lookup

    status = 0
    for name in args:
        if lookup(name, ctx.machine) is not None:
            io.out.write(f"/usr/bin/{name}\n")
        else:
            io.err.write(
                f"/usr/bin/which: no {name} in (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin)\n"
            )
            status = 1
    return status


def _echo(ctx: Ctx, args, io) -> int:
    newline, escapes = True, False
    while args and re.fullmatch(r"-[neE]+", args[0]):
        newline = newline and "n" not in args[0]
        escapes = "e" in args[0] or escapes
        args = args[1:]
    text = " ".join(args)
    if escapes:
        text = _unescape(text)
    io.out.write(text + ("\n" if newline else ""))
    return 0


_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", "r": "\r", "a": "\a", "0": "\0", "e": "\x1b"}
_ESCAPE = re.compile(r"\\(.)")
PRINTF_SPEC = re.compile(r"%([-+ 0#]*\d*(?:\.\d+)?)([sdixXfbc%])")


def _unescape(text: str) -> str:
    if "\\" not in text:  # nothing to replace: the text itself
        return text
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), "\\" + m.group(1)), text)


def _printf(ctx: Ctx, args, io) -> int:
    if not args:
        io.err.write("printf: usage: printf [-v var] format [arguments]\n")
        return 2
    fmt, values = args[0], args[1:]
    spec = PRINTF_SPEC
    out = []
    while True:
        used = 0

        def sub(m: re.Match) -> str:
            nonlocal used
            flags, conv = m.groups()
            if conv == "%":
                return "%"
            value = values[used] if used < len(values) else ""
            used += 1
            if conv in "dixX":
                try:
                    num = int(value, 0) if value else 0
                except ValueError:
                    num = 0
                return ("%" + flags + ("d" if conv == "i" else conv)) % num
            if conv == "f":
                return ("%" + flags + "f") % float(value or 0)
            if conv == "b":
                return _unescape(value)
            return ("%" + flags + "s") % value

        out.append(_unescape(spec.sub(sub, fmt)))
        values = values[used:]
        if not values or not used:
            break
    io.out.write("".join(out))
    return 0


async def _sleep(ctx: Ctx, args, io) -> int:
    total = 0.0
    for a in args:
        m = re.fullmatch(r"(\d+(?:\.\d*)?)([smhd]?)", a)
        if not m:
            io.err.write(f"sleep: invalid time interval '{a}'\n")
            return 1
        total += float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
    await asyncio.sleep(total)
    return 0


def _test(ctx: Ctx, args, io) -> int:
    return evaluate(ctx, args, io)


def _bracket(ctx: Ctx, args, io) -> int:
    if not args or args[-1] != "]":
        io.err.write("bash: [: missing `]'\n")
        return 2
    return _test(ctx, args[:-1], io)


BUILTINS = {
    "exit": _exit,
    "cd": _cd,
    "pwd": _pwd,
    "export": _export,
    "unset": _unset,
    "set": _set,
    "wait": _wait,
    "read": _read,
    "command": _command,
    "type": _command,
    "echo": _echo,
    "printf": _printf,
    "test": _test,
    "[": _bracket,
    "sleep": _sleep,
    "true": lambda ctx, args, io: 0,
    "false": lambda ctx, args, io: 1,
    ":": lambda ctx, args, io: 0,
    "which": _which,
}
