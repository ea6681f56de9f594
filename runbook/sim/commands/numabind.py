"""`numactl --cpunodebind=N --membind=N CMD …`: check the NUMA nodes exist and
run CMD with its binding in perfmodel.NUMA_BINDING (ib_write_bw off the NIC's
node is slower). Real numactl refuses a node that does not exist with "<n> is
invalid"."""

from __future__ import annotations

import re

from ..perfmodel import NUMA_BINDING
from .base import Ctx

# `--cpunodebind=0`, `--cpunodebind 0`, `-N 0` and `-N0` are all accepted by numactl
BIND = re.compile(
    r"^(--cpunodebind|--membind|--physcpubind|--preferred|-N|-m|-C|-p)(?:=(.*)|(?<=^-[NmCp])(.+))?$"
)


def wants_binding(args: list[str]) -> bool:
    return bool(args) and bool(BIND.match(args[0]))


async def run_bound(ctx: Ctx, args: list[str], io) -> int:
    i, nodes = 0, set()
    while i < len(args):
        m = BIND.match(args[i])
        if not m:
            break
        value = m.group(2) if m.group(2) is not None else m.group(3)
        if value is None:
            i += 1
            value = args[i] if i < len(args) else ""
        if m.group(1) not in ("--physcpubind", "-C"):
            for part in value.replace("-", ",").split(","):
                if not part.isdigit() or int(part) >= ctx.node.sockets:
                    io.err.write(f"numactl: node argument {part} is out of range\n<{part}> is invalid\n")
                    return 1
                nodes.add(int(part))
        i += 1
    if i < len(args) and args[i] == "--":
        i += 1
    if i >= len(args):
        io.err.write("usage: numactl [--cpunodebind=nodes] [--membind=nodes] command args ...\n")
        return 1
    token = NUMA_BINDING.set(frozenset(nodes) or None)
    try:
        return await ctx.shell.dispatch(args[i:], io)
    finally:
        NUMA_BINDING.reset(token)


async def stdbuf(ctx: Ctx, args, io) -> int:
    """`stdbuf -oL CMD …`: the simulator's output is never held back; run CMD."""
    i = 0
    while i < len(args) and re.match(r"^(-[ioe]\w*|--(input|output|error)=\w+)$", args[i]):
        i += 1
    if i >= len(args):
        io.err.write("stdbuf: missing operand\n")
        return 125
    return await ctx.shell.dispatch(args[i:], io)


COMMANDS = {"stdbuf": stdbuf}
