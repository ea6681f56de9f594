"""What a simulated command gets: the shell, the machine, and small helpers."""

from __future__ import annotations

import asyncio

from ..vfs import FsError


class Ctx:
    def __init__(self, shell, machine):
        self.shell = shell
        self.machine = machine

    @property
    def node(self):
        return self.machine.state

    @property
    def fs(self):
        return self.machine.fs

    @property
    def cluster(self):
        return self.machine.cluster

    @property
    def fabric(self):
        return self.machine.cluster.fabric

    def path(self, p: str) -> str:
        return self.machine.fs.norm(p, self.shell.cwd)

    def read(self, p: str) -> str:
        return self.machine.fs.read(self.path(p))


async def modelled_wait(ctx: Ctx, seconds: float) -> None:
    """The wall time a long test is modelled to take (dcgmi diag, gpu_burn, the
    bandwidth tests, an NCCL job), scaled by the lab's time scale (`runbook sim
    --time-scale`). At 0 it still yields to the event loop once, so a test's peer
    (a perftest server waiting for its client) runs in the same order as ever.
    A fault's delay (slow, long_job, a reboot) and the `sleep` command are not
    modelled durations: they keep their time."""
    await asyncio.sleep(seconds * ctx.cluster.time_scale)


def read_inputs(ctx: Ctx, name: str, files: list[str], io) -> tuple[list[tuple[str, str]], int]:
    """[(filename, text)] for the operands (stdin when none or '-'), and the status
    (1 when some file could not be read; the error is already printed)."""
    if not files:
        return [("-", io.stdin.read_all())], 0
    # the files read together (vfs.py read_many), stdin where "-" stands
    fs = ctx.fs
    read = fs.read_many(fs.norm_many([f for f in files if f != "-"], ctx.shell.cwd))
    if len(read) == len(files) and all(type(t) is str for t in read):  # no "-", every file read
        return list(zip(files, read)), 0
    texts = iter(read)
    out, status = [], 0
    for f in files:
        if f == "-":
            out.append(("-", io.stdin.read_all()))
            continue
        text = next(texts)
        if isinstance(text, FsError):
            io.err.write(f"{name}: {f}: {text}\n")
            status = 1
            continue
        out.append((f, text))
    return out, status


def split_opts(args: list[str], with_value: str = "") -> tuple[dict[str, str | bool], list[str]]:
    """Tiny getopt: -abc flags, -n5 / -n 5 for letters in `with_value`, `--` ends options.
    Long options (--foo, --foo=bar) are kept as keys too."""
    opts: dict[str, str | bool] = {}
    # Only the part up to the last option (and the value it may take) is read
    # argument by argument; the operands after it (a `grep . pkeys/*`'s 896) are
    # kept as they are.
    dashed = [i for i, a in enumerate(args) if a[:1] == "-"]
    if not dashed:
        return opts, list(args)
    head = dashed[-1] + 2
    tail, args = args[head:], args[:head]
    rest: list[str] = []
    i = 0
    n_args = len(args)
    while i < n_args:
        a = args[i]
        if a[:1] != "-":  # an operand: what the tests below come to for it
            rest.append(a)
            i += 1
            continue
        if a == "--":
            rest.extend(args[i + 1 :])
            break
        if a.startswith("--"):
            key, eq, value = a[2:].partition("=")
            opts["--" + key] = value if eq else True
        elif a.startswith("-") and len(a) > 1 and not a[1:].isdigit():
            j = 1
            while j < len(a):
                letter = a[j]
                if letter in with_value:
                    value = a[j + 1 :]
                    if not value and i + 1 < len(args):
                        i += 1
                        value = args[i]
                    opts[letter] = value
                    break
                opts[letter] = True
                j += 1
        else:
            rest.append(a)
        i += 1
    rest += tail
    return opts, rest


def lines_of(text: str) -> list[str]:
    return text.splitlines()


def join_lines(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)
