"""File tools: ls touch rm mkdir cp sha256sum md5sum."""

from __future__ import annotations

import hashlib
import posixpath

from ..vfs import FsError
from .base import Ctx, split_opts


def ls(ctx: Ctx, args, io) -> int:
    opts, paths = split_opts(args)
    status = 0
    targets = paths or ["."]
    for n, p in enumerate(targets):
        path = ctx.path(p)
        if ctx.fs.isfile(path):
            io.out.write((_long(ctx, path, p) if opts.get("l") else p) + "\n")
            continue
        if not ctx.fs.isdir(path):
            io.err.write(f"ls: cannot access '{p}': No such file or directory\n")
            status = 2
            continue
        if len(targets) > 1:
            io.out.write(("\n" if n else "") + f"{p}:\n")
        names = [x for x in ctx.fs.listdir(path) if opts.get("a") or not x.startswith(".")]
        for name in names:
            full = posixpath.join(path, name)
            io.out.write((_long(ctx, full, name) if opts.get("l") else name) + "\n")
    return status


def _long(ctx: Ctx, path: str, shown: str) -> str:
    if ctx.fs.isdir(path):
        return f"drwxr-xr-x 2 root root 4096 Jan  1 00:00 {shown}"
    size = len(ctx.fs.read(path).encode()) if not path.startswith(("/sys/", "/proc/")) else 4096
    return f"-rw-r--r-- 1 root root {size:>5} Jan  1 00:00 {shown}"


def touch(ctx: Ctx, args, io) -> int:
    status = 0
    for p in [a for a in args if not a.startswith("-")]:
        path = ctx.path(p)
        if ctx.fs.exists(path):
            continue
        try:
            ctx.fs.check_writable(path)
            ctx.fs.write(path, "")
        except FsError as exc:
            io.err.write(f"touch: cannot touch '{p}': {exc}\n")
            status = 1
    ctx.machine.changed()
    return status


def rm(ctx: Ctx, args, io) -> int:
    opts, paths = split_opts(args)
    status = 0
    recursive = opts.get("r") or opts.get("R") or opts.get("--recursive")
    for p in paths:
        path = ctx.path(p)
        if recursive and ctx.fs.isdir(path) and not ctx.fs.isfile(path):
            if path.startswith(("/proc", "/sys")) or path == "/":
                io.err.write(f"rm: cannot remove '{p}': Operation not permitted\n")
                status = 1
                continue
            # what was written or made under it (a launch job's directory); the
            # system's own directories of the image stay
            prefix = path.rstrip("/") + "/"
            node = ctx.node
            for f in [f for f in node.files if f.startswith(prefix)]:
                del node.files[f]
            node.dirs[:] = [d for d in node.dirs if d != path and not d.startswith(prefix)]
            continue
        try:
            ctx.fs.remove(path)
        except FsError as exc:
            if not (opts.get("f") and "No such" in str(exc)):
                io.err.write(f"rm: cannot remove '{p}': {exc}\n")
                status = 1
    ctx.machine.changed()
    return status


def mkdir(ctx: Ctx, args, io) -> int:
    opts, paths = split_opts(args, with_value="m")
    status = 0
    for p in paths:
        try:
            ctx.fs.mkdir(ctx.path(p), parents=bool(opts.get("p")))
        except FsError as exc:
            io.err.write(f"mkdir: cannot create directory '{p}': {exc}\n")
            status = 1
    ctx.machine.changed()
    return status


def cp(ctx: Ctx, args, io) -> int:
    _, paths = split_opts(args)
    if len(paths) != 2:
        io.err.write("cp: missing destination file operand\n")
        return 1
    src, dst = (ctx.path(p) for p in paths)
    try:
        text = ctx.fs.read(src)
        if ctx.fs.isdir(dst):
            dst = posixpath.join(dst, posixpath.basename(src))
        ctx.fs.check_writable(dst)
        ctx.fs.write(dst, text)
    except FsError as exc:
        io.err.write(f"cp: cannot copy '{paths[0]}' to '{paths[1]}': {exc}\n")
        return 1
    ctx.machine.changed()
    return 0


def mv(ctx: Ctx, args, io) -> int:
    """mv SRC DST: a rename - the destination is replaced in one step, so a
    reader (OpenSM re-reading partitions.conf) never sees half a file. A
    directory moves with everything under it (a detached job's directory)."""
    _, paths = split_opts(args)
    if len(paths) != 2:
        io.err.write("mv: missing destination file operand\n")
        return 1
    src, dst = (ctx.path(p) for p in paths)
    fs, node = ctx.fs, ctx.node
    if fs.isdir(src) and not fs.isfile(src):
        if src in ("/", "/proc", "/sys"):
            io.err.write(f"mv: cannot move '{paths[0]}' to '{paths[1]}': Device or resource busy\n")
            return 1
        prefix = src.rstrip("/") + "/"
        for path in [p for p in node.files if p.startswith(prefix)]:
            node.files[dst + path[len(src) :]] = node.files.pop(path)
        node.dirs[:] = [dst + d[len(src) :] if d == src or d.startswith(prefix) else d for d in node.dirs]
        if dst not in node.dirs:
            node.dirs.append(dst)
        ctx.machine.changed()
        return 0
    try:
        text = fs.read(src)
        if fs.isdir(dst):
            dst = posixpath.join(dst, posixpath.basename(src))
        fs.check_writable(dst)
        fs.write(dst, text)
        fs.remove(src)
    except FsError as exc:
        io.err.write(f"mv: cannot move '{paths[0]}' to '{paths[1]}': {exc}\n")
        return 1
    ctx.machine.changed()
    return 0


def _digest(algo: str):
    def run(ctx: Ctx, args, io) -> int:
        _, files = split_opts(args)
        status = 0
        for f in files or ["-"]:
            try:
                text = io.stdin.read_all() if f == "-" else ctx.read(f)
            except FsError as exc:
                io.err.write(f"{algo}sum: {f}: {exc}\n")
                status = 1
                continue
            io.out.write(f"{hashlib.new(algo, text.encode()).hexdigest()}  {f}\n")
        return status

    return run


COMMANDS = {
    "ls": ls,
    "touch": touch,
    "rm": rm,
    "mkdir": mkdir,
    "cp": cp,
    "mv": mv,
    "sha256sum": _digest("sha256"),
    "md5sum": _digest("md5"),
    "sha1sum": _digest("sha1"),
}
