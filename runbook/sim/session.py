"""One SSH channel on a simulated node: an exec request runs one command line
through the small shell; a channel without a command gets an interactive prompt.
Stdin is read only when the command line would read it (so `ssh host cmd` from
a terminal does not wait for an EOF that never comes)."""

from __future__ import annotations

import asyncio
import functools
import logging

from .shell.interp import Shell
from .shell.io import Buffer, Io, Stdin
from .shell.lexer import ShellSyntaxError
from .shell.nodes import AndOr, Simple
from .shell.parser import parse

log = logging.getLogger("runbook.sim")
STDIN_READERS = {
    "cat",
    "grep",
    "egrep",
    "wc",
    "head",
    "tail",
    "sort",
    "uniq",
    "awk",
    "gawk",
    "tee",
    "tr",
    "cut",
    "sha256sum",
    "md5sum",
    "read",
    "mlxconfig",
}


@functools.lru_cache(maxsize=4096)
def reads_stdin(src: str) -> bool:
    """Whether the first command of some top-level pipeline reads the channel's stdin.
    A question of the text alone, asked for every exec request: answered once per
    distinct command line (the runbook sends the same lines to every node)."""
    try:
        tree = parse(src)
    except ShellSyntaxError:
        return False
    return any(_first_reads(item) for item, _ in tree.items)


def _first_reads(item: AndOr) -> bool:
    for pipe in [item.first] + [p for _, p in item.rest]:
        cmd = pipe.cmds[0]
        if not isinstance(cmd, Simple) or not cmd.words:
            continue
        if any(r.op in ("<", "<<", "<&") and r.fd == 0 for r in cmd.redirs):
            continue
        name = cmd.words[0].literal()
        if name not in STDIN_READERS:
            continue
        args = [w.literal() or "x" for w in cmd.words[1:]]
        if name == "mlxconfig":
            if "-y" not in args and "--yes" not in args and any(a in ("set", "reset", "r") for a in args):
                return True
            continue
        operands = [a for a in args if not a.startswith("-") or a == "-"]
        if name in ("grep", "egrep") and operands:
            operands = operands[1:]  # the pattern
        if name in ("awk", "gawk") and operands:
            operands = operands[1:]  # the program
        if name == "read" or name == "tee" or not operands or operands == ["-"]:
            return True
    return False


class _Live(Buffer):
    """Standard output written to the SSH channel as it comes (a server's
    "listening" banner must reach the client before the command ends), in one
    write per turn of the event loop: what a command prints before it waits
    goes out together, not one SSH packet per line."""

    def __init__(self, process, stream: str = "stdout") -> None:
        super().__init__()
        self.process = process
        self.stream = stream  # stderr too: a detached job's progress lines come as they are printed
        self.pending: list[str] = []

    def write(self, text: str) -> None:
        if text:
            if not self.pending:
                asyncio.get_running_loop().call_soon(self.flush)
            self.pending.append(text)

    def flush(self) -> None:
        if not self.pending:
            return
        text = "".join(self.pending)
        self.pending.clear()
        try:
            getattr(self.process, self.stream).write(text)
        except Exception:  # the channel is gone: output has nowhere to go, like a closed pipe
            pass


async def run_line(
    machine,
    src: str,
    stdin: str = "",
    shell: Shell | None = None,
    out: Buffer | None = None,
    err: Buffer | None = None,
) -> tuple[str, str, int]:
    shell = shell or Shell(machine)
    out, err = out if out is not None else Buffer(), err if err is not None else Buffer()
    try:
        status = await shell.run(src, Io(Stdin(stdin), out, err))
    except asyncio.CancelledError:
        raise
    except Exception:  # a simulator bug must not kill the server: report like a crashed tool
        log.exception("command failed on %s: %r", machine.name, src)
        err.write("bash: internal error in the simulator (see sim.log)\n")
        status = 70
    return out.text(), err.text(), status


async def exec_channel(node, process) -> None:
    """Serve one exec request (or an interactive shell) for SimNode `node`."""
    if "hang" in node.state.faults:
        await process.wait_closed()
        return
    if "slow" in node.state.faults:
        await asyncio.sleep(node.lab.slow_seconds)
        if process.is_closing() or process.channel.get_extra_info("connection") not in node.conns:
            # the client went away while sshd was still setting the session up: a real
            # sshd tears the session down and never starts the command (a command started
            # late, for nobody, would connect to servers of the next run)
            return
    if process.command is not None and node.lab.load_faults.take_drop():
        # overload (sim/loadfaults.py): the connection goes mid-command, no exit status
        await asyncio.sleep(0.01)
        process.channel.get_connection().abort()
        return
    command = process.command
    if command is None:
        await _interactive(node, process)
        return
    stdin = ""
    if reads_stdin(command):
        stdin = await process.stdin.read()
    shell = Shell(node.machine)
    conn = process.channel.get_extra_info("connection")
    # the channel's own is_closing, looked up once: asyncssh's process and line-editor
    # wrappers delegate on every call, and the shell asks before every command of a loop
    closing = process.channel.is_closing
    shell.hung_up = lambda: closing() or conn not in node.conns
    live_out, live_err = _Live(process), _Live(process, "stderr")
    out, err, status = await run_line(node.machine, command, stdin, shell=shell, out=live_out, err=live_err)
    live_out.flush()  # what the last turn printed, before the exit status
    live_err.flush()
    try:
        _write(process, out, err)
        process.exit(status)
    except Exception:  # the client closed this channel meanwhile: the connection lives on
        log.debug("channel closed before %s's command ended", node.machine.name)
    node.after_command()


def _write(process, out: str, err: str) -> None:
    if out:
        process.stdout.write(out)
    if err:
        process.stderr.write(err)


async def _interactive(node, process) -> None:
    shell = Shell(node.machine)
    prompt = f"[root@{node.name} ~]# "
    process.stdout.write(f"Last login: from 127.0.0.1\n{prompt}")
    while True:
        line = await process.stdin.readline()
        if not line:
            break
        if line.strip() in ("exit", "logout"):
            break
        out, err, _ = await run_line(node.machine, line, shell=shell)
        _write(process, out, err)
        if node.machine.reboot_requested:
            break
        process.stdout.write(prompt)
    process.exit(shell.status)
    node.after_command()
