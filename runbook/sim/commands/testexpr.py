"""test / [ expressions: file tests, string and integer comparisons, ! -a -o."""

from __future__ import annotations

from .base import Ctx

UNARY_FILE = {"-e", "-f", "-d", "-r", "-w", "-x", "-s", "-L", "-h"}
INT_OPS = {
    "-eq": int.__eq__,
    "-ne": int.__ne__,
    "-lt": int.__lt__,
    "-le": int.__le__,
    "-gt": int.__gt__,
    "-ge": int.__ge__,
}


class _Bad(Exception):
    pass


def evaluate(ctx: Ctx, args: list[str], io) -> int:
    try:
        if "-o" not in args and "-a" not in args and (not args or args[0] != "!"):
            # one primary (`[ -f x ]`, `[ "$a" = b ]`): what _or, _and and _not come to
            return 0 if _primary(ctx, args) else 1
        return 0 if _or(ctx, list(args)) else 1
    except _Bad as exc:
        io.err.write(f"bash: test: {exc}\n")
        return 2


def _or(ctx, args) -> bool:
    parts = _split(args, "-o")
    return any(_and(ctx, p) for p in parts)


def _and(ctx, args) -> bool:
    return all(_not(ctx, p) for p in _split(args, "-a"))


def _split(args, sep):
    out, cur = [], []
    for a in args:
        if a == sep and cur:
            out.append(cur)
            cur = []
        else:
            cur.append(a)
    out.append(cur)
    return out


def _not(ctx, args) -> bool:
    if args and args[0] == "!" and len(args) > 1:
        return not _not(ctx, args[1:])
    return _primary(ctx, args)


def _primary(ctx: Ctx, args) -> bool:
    if not args:
        return False
    if len(args) == 1:
        return args[0] != ""
    if len(args) == 2:
        op, operand = args
        if op == "-z":
            return operand == ""
        if op == "-n":
            return operand != ""
        if op in UNARY_FILE:
            path = ctx.path(operand)
            fs = ctx.fs
            if op == "-d":
                return fs.isdir(path)
            if op == "-f":
                return fs.isfile(path)
            if op == "-s":
                return fs.isfile(path) and bool(fs.read(path))
            if op in ("-L", "-h"):
                return False
            return fs.exists(path)
        raise _Bad(f"{op}: unary operator expected")
    if len(args) == 3:
        a, op, b = args
        if op in ("=", "=="):
            return a == b
        if op == "!=":
            return a != b
        if op in INT_OPS:
            try:
                return INT_OPS[op](int(a), int(b))
            except ValueError:
                raise _Bad(
                    f"{a if not a.lstrip('-').isdigit() else b}: integer expression expected"
                ) from None
        if op in ("<", ">"):
            return a < b if op == "<" else a > b
    raise _Bad("too many arguments")
