"""Runs parsed shell code against one simulated machine.

Commands are buffered (each gets its whole stdin as text and writes into a
buffer), so pipelines run stage by stage. Exit statuses, $?, `set -e`,
`set -o pipefail`, redirections, here-documents, globbing and command
substitution behave as in sh; an unknown command answers like bash (127).
"""

from __future__ import annotations

import asyncio
import inspect
import posixpath
import re

from ..vfs import FsError
from . import arith
from .io import Buffer, Discard, FileSink, Io, Stdin
from .lexer import ShellSyntaxError, heredoc_parts
from .nodes import AndOr, CmdList, For, Group, If, Pipeline, Redir, Simple, While, Word
from .parser import parse

PATH_DIRS = {
    "/usr/bin",
    "/usr/sbin",
    "/bin",
    "/sbin",
    "/usr/local/bin",
    "/usr/local/sbin",
    "/opt/mellanox/bin",
    "/usr/lib64/openmpi/bin",
    "/usr/local/cuda/bin",
    "/opt/nccl-tests/build",
}
GLOB_CHARS = re.compile(r"[*?\[]")
# compiled once: every expansion of every word uses them
FIELD_SEPARATORS = re.compile(r"[ \t\n]+")
GLOB_ESCAPE = re.compile(r"([*?\[])")
VAR_SPEC = re.compile(r"([A-Za-z_0-9]*)(:?[-=+?]?)(.*)", re.S)
SPECIAL_PARAMETERS = frozenset("?$#0!-@*")  # Shell.var: $? $$ $# $0 $! $- $@ $*


QUOTED, LONE, JOINED, GENERAL = "quoted", "lone", "joined", "general"  # Word.plan, besides a tuple of fields


def expansion_plan(parts) -> tuple[str, ...] | str:
    """What expand_fields does with a word, decided once from its parts: the
    fields themselves when they cannot change (literal text without an unquoted
    glob character), QUOTED for a word quoted throughout (one field, never split
    nor globbed), LONE for one unquoted $x, $(c) or $((e)) (its text split, each
    field globbed: a loop's `$i`, `$(ls ...)`), JOINED for text and $x without
    an unquoted glob character (`/proc/irq/$i/smp_affinity_list`: one field
    when no unquoted $x holds a blank or a glob character), else GENERAL. Each
    gives the general path's answer (tests/sim/test_expand_fast_paths.py)."""
    if len(parts) == 1 and parts[0][0] == "lit":
        _, value, quoted = parts[0]
        if quoted or (value and GLOB_CHARS.search(value) is None):
            return (value,)
        if not value:
            return ()
        if "/" not in value and "*" not in value and "?" not in value and "]" not in value:
            # a name whose [ has no ]: a literal pattern (vfs.py glob), which gives
            # the name itself whether or not a file has it (a test's `[`)
            return (value,)
        return GENERAL  # a glob: its matches change with the files
    if parts and all(quoted for _, _, quoted in parts):
        return QUOTED
    if len(parts) == 1 and parts[0][0] in ("var", "cmd", "arith"):
        return LONE
    if all(
        kind == "var" or (kind == "lit" and (quoted or GLOB_CHARS.search(value) is None))
        for kind, value, quoted in parts
    ):
        return JOINED
    return GENERAL


_COMMANDS: tuple = ()  # (BUILTINS, lookup, Ctx) of sim/commands, imported on first use


def _import_commands() -> tuple:
    """sim/commands imports the shell: its table is imported when the first command
    runs (an import statement in dispatch() cost ~6% of a loop's CPU)."""
    global _COMMANDS
    from ..commands import BUILTINS, lookup
    from ..commands.base import Ctx

    _COMMANDS = (BUILTINS, lookup, Ctx)
    return _COMMANDS


def _lone_simple(pipe: Pipeline) -> Simple | None:
    """The pipeline's command when it is one simple command, not negated: what
    exec_pipeline and exec_command do for it is to run it (exec_simple), set
    $? and the error sink; the callers do those steps themselves, without two
    coroutines more for every command of a script."""
    cmds = pipe.cmds
    if len(cmds) == 1 and not pipe.negate and type(cmds[0]) is Simple:
        return cmds[0]
    return None


def _never() -> bool:
    """A shell's hung_up until sim/session.py gives it its channel's."""
    return False


class ExitShell(Exception):
    def __init__(self, status: int):
        self.status = status


class RedirError(Exception):
    pass


class Shell:
    def __init__(self, machine, variables: dict[str, str] | None = None):
        self.machine = machine
        self.vars = (
            dict(variables)
            if variables is not None
            else {
                "HOME": "/root",
                "USER": "root",
                "LOGNAME": "root",
                "SHELL": "/bin/bash",
                "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/root/bin",
                "PWD": "/root",
                "HOSTNAME": machine.state.name,
                "IFS": " \t\n",
            }
        )
        self.status = 0
        self.options: set[str] = set()
        self.jobs: list[asyncio.Task] = []
        # Whether the SSH session that runs this shell is gone (set by sim/session.py).
        # A real shell whose client went away dies at its next write to the closed
        # channel (SIGPIPE); here it stops before its next command, so a killed
        # client's loop does not go on to meet the servers of the next run. Jobs
        # already started in the background run on, as real ones do.
        self.hung_up = _never

    @property
    def cwd(self) -> str:
        return self.vars.get("PWD", "/root")

    def path(self, p: str) -> str:
        return self.machine.fs.norm(p, self.cwd)

    # ---- entry --------------------------------------------------------------
    async def run(self, src: str, io: Io) -> int:
        try:
            tree = parse(src)
        except ShellSyntaxError as exc:
            io.err.write(f"bash: -c: line 1: {exc}\n")
            self.status = 2
            return 2
        try:
            self.status = await self.exec_list(tree, io)
        except ExitShell as exc:
            self.status = exc.status
        await self.wait_jobs()
        return self.status

    async def wait_jobs(self) -> None:
        while self.jobs:
            jobs, self.jobs = self.jobs, []
            await asyncio.gather(*jobs, return_exceptions=True)

    # ---- lists and pipelines ---------------------------------------------------
    async def exec_list(self, node: CmdList, io: Io, cond: bool = False) -> int:
        status = 0
        for item, background in node.items:
            if self.hung_up():
                raise ExitShell(141)  # 128 + SIGPIPE
            if background:
                self.jobs.append(asyncio.ensure_future(self._background(item, io)))
                status = 0
                continue
            simple = None if item.rest else _lone_simple(item.first)
            if (
                simple is not None
            ):  # one command: exec_and_or's, exec_pipeline's and exec_command's steps here
                self._err_sink = io.err
                status = self.status = await self.exec_simple(simple, io)
                if status and not cond and "errexit" in self.options:
                    raise ExitShell(status)
                continue
            status = await self.exec_and_or(item, io, cond)
        return status

    async def _background(self, item: AndOr, io: Io) -> None:
        try:
            await self.exec_and_or(item, io, True)
        except ExitShell:
            pass

    async def exec_and_or(self, node: AndOr, io: Io, cond: bool = False) -> int:
        simple = _lone_simple(node.first)
        if simple is not None:  # exec_pipeline's and exec_command's steps for one command
            self._err_sink = io.err
            status = self.status = await self.exec_simple(simple, io)
        else:
            status = await self.exec_pipeline(node.first, io)
        last = node.first
        for op, pipe in node.rest:
            if (op == "&&") == (status == 0):
                simple = _lone_simple(pipe)
                if simple is not None:
                    self._err_sink = io.err
                    status = self.status = await self.exec_simple(simple, io)
                else:
                    status = await self.exec_pipeline(pipe, io)
                last = pipe
            else:
                last = None
        self.status = status
        if status and not cond and "errexit" in self.options and last is not None:
            if last is (node.rest[-1][1] if node.rest else node.first) and not last.negate:
                raise ExitShell(status)
        return status

    async def exec_pipeline(self, node: Pipeline, io: Io) -> int:
        if len(node.cmds) == 1:  # most pipelines: what the loop below does for one command
            status = await self.exec_command(node.cmds[0], io)
            if node.negate:
                status = 0 if status else 1
            self.status = status
            return status
        stdin = io.stdin
        statuses = []
        for k, cmd in enumerate(node.cmds):
            last = k == len(node.cmds) - 1
            out = io.out if last else Buffer()
            statuses.append(await self.exec_command(cmd, Io(stdin, out, io.err)))
            if not last:
                stdin = Stdin(out.text())
        status = statuses[-1]
        if "pipefail" in self.options:
            status = next((s for s in reversed(statuses) if s), 0)
        if node.negate:
            status = 0 if status else 1
        self.status = status
        return status

    async def exec_command(self, node, io: Io) -> int:
        self._err_sink = io.err
        if isinstance(node, Simple):
            return await self.exec_simple(node, io)
        try:
            sub, writes = await self.open_redirs(node.redirs, io)
        except RedirError as exc:
            io.err.write(f"bash: {exc}\n")
            return 1
        if isinstance(node, For):
            status = await self.exec_for(node, sub)
        elif isinstance(node, If):
            status = await self.exec_if(node, sub)
        elif isinstance(node, While):
            status = await self.exec_while(node, sub)
        elif isinstance(node, Group):
            status = await self.exec_group(node, sub)
        else:  # pragma: no cover - parser produces nothing else
            raise TypeError(node)
        return self.flush(writes, io, "bash", status)

    async def exec_for(self, node: For, io: Io) -> int:
        items = await self.expand_words(node.words) if node.words is not None else []
        status = 0
        for item in items:
            self.vars[node.var] = item
            status = await self.exec_list(node.body, io)
        return status

    async def exec_if(self, node: If, io: Io) -> int:
        for cond, body in node.clauses:
            if await self.exec_list(cond, io, cond=True) == 0:
                return await self.exec_list(body, io)
        return await self.exec_list(node.orelse, io) if node.orelse else 0

    async def exec_while(self, node: While, io: Io) -> int:
        status = 0
        for _ in range(100000):  # a runaway loop must not hang the simulator
            ok = await self.exec_list(node.cond, io, cond=True) == 0
            if ok == node.until:
                break
            status = await self.exec_list(node.body, io)
            await asyncio.sleep(0)
        return status

    async def exec_group(self, node: Group, io: Io) -> int:
        if not node.forked:
            return await self.exec_list(node.body, io)
        child = Shell(self.machine, self.vars)
        child.options = set(self.options)
        try:
            status = await child.exec_list(node.body, io)
        except ExitShell as exc:
            status = exc.status
        await child.wait_jobs()
        return status

    # ---- simple commands --------------------------------------------------------
    async def exec_simple(self, node: Simple, io: Io) -> int:
        self.status_from_subst = None
        argv = await self.expand_words(node.words)
        values = [(name, await self.expand_str(word)) for name, word in node.assigns] if node.assigns else []
        if not argv:
            for name, value in values:
                self.vars[name] = value
            try:
                _, writes = await self.open_redirs(node.redirs, io)
            except RedirError as exc:
                io.err.write(f"bash: {exc}\n")
                return 1
            return self.flush(writes, io, "bash", self.status_from_subst or 0)
        if not node.redirs and not values:  # most commands: what open_redirs and flush come to without any
            return await self.dispatch(argv, io)
        try:
            sub, writes = await self.open_redirs(node.redirs, io)
        except RedirError as exc:
            io.err.write(f"bash: {exc}\n")
            return 1
        if not values:
            return self.flush(writes, io, argv[0], await self.dispatch(argv, sub))
        saved = {name: self.vars.get(name) for name, _ in values}
        for name, value in values:
            self.vars[name] = value
        try:
            status = await self.dispatch(argv, sub)
        finally:
            for name, old in saved.items():
                if old is None:
                    self.vars.pop(name, None)
                else:
                    self.vars[name] = old
        return self.flush(writes, io, argv[0], status)

    async def dispatch(self, argv: list[str], io: Io) -> int:
        builtins, lookup, Ctx = _COMMANDS or _import_commands()
        name = argv[0]
        if "/" in name:
            directory, base = posixpath.split(name)
            design = self.machine.cluster.design
            extra = {
                str(design.var(v, d)).rstrip("/")
                for v, d in (("nccl_tests_dir", "/opt/nccl-tests/build"), ("gpu_burn_dir", "/opt/gpu-burn"))
            }
            directory = self.machine.fs.norm(directory or "/", self.cwd)  # ./gpu_burn run from its directory
            found = lookup(base, self.machine) if directory in PATH_DIRS or directory in extra else None
            if found is None:
                io.err.write(f"bash: {name}: No such file or directory\n")
                return 127
            func = found
        elif name in builtins:
            func = builtins[name]
        else:
            func = lookup(name, self.machine)
            if func is None:
                io.err.write(f"bash: {name}: command not found\n")
                return 127
        result = func(Ctx(self, self.machine), argv[1:], io)
        if type(result) is not int and inspect.isawaitable(result):  # most commands answer at once
            result = await result
        return int(result)

    # ---- redirections ---------------------------------------------------------------
    async def open_redirs(self, redirs: list[Redir], io: Io):
        if not redirs:
            return io, []  # (an Io is never changed after it is made)
        fds = {0: io.stdin, 1: io.out, 2: io.err}
        writes: list[tuple[str, Buffer, bool]] = []
        fs = self.machine.fs
        for r in redirs:
            if r.op == "<<":
                doc = r.heredoc
                text = await self.expand_str(heredoc_parts(doc.body)) if doc.expand else doc.body
                fds[r.fd] = Stdin(text)
                continue
            target = await self.expand_str(r.target)
            if r.op in (">&", "<&") and (target.isdigit() or target == "-"):
                if target == "-":
                    fds[r.fd] = Discard() if r.op == ">&" else Stdin("")
                elif int(target) in fds:
                    fds[r.fd] = fds[int(target)]
                else:
                    raise RedirError(f"{target}: Bad file descriptor")
                continue
            path = self.path(target)
            if r.op in ("<", "<&"):
                try:
                    fds[r.fd] = Stdin(fs.read(path))
                except FsError as exc:
                    raise RedirError(f"{target}: {exc}") from None
                continue
            if path == "/dev/null":
                sink: Buffer = Discard()
            elif path in ("/dev/stdout", "/dev/stderr"):
                sink = fds[1 if path.endswith("out") else 2]
            else:
                try:
                    fs.check_writable(path)
                except FsError as exc:
                    raise RedirError(f"{target}: {exc}") from None
                if fs.is_plain_file_path(path):
                    # written as it comes, like a real file: a job's progress can be read
                    # from its output file while it runs (engine/detached.py)
                    sink = FileSink(fs, path, append=r.op == ">>")
                else:
                    sink = Buffer()
                writes.append((path, sink, r.op == ">>"))
            if r.op in ("&>", ">&"):
                fds[1] = fds[2] = sink
            else:
                fds[r.fd] = sink
        return Io(fds[0], fds[1], fds[2]), writes

    def flush(self, writes, io: Io, name: str, status: int) -> int:
        for path, buf, append in writes:
            if isinstance(buf, FileSink):  # written through already
                continue
            try:
                self.machine.fs.write(path, buf.text(), append)
            except FsError as exc:
                io.err.write(f"bash: {name}: write error: {exc}\n")
                status = 1
        if writes:
            self.machine.changed()
        return status

    # ---- expansion --------------------------------------------------------------------
    async def expand_part(self, kind: str, value: str) -> str:
        if kind == "var":
            return self.var(value)
        if kind == "cmd":
            child = Shell(self.machine, self.vars)
            out = Buffer()
            err = self._err_sink
            await child.run(value, Io(Stdin(""), out, err))
            self.status_from_subst = child.status
            self.status = child.status
            return out.text().rstrip("\n")
        if kind == "arith":
            try:
                return str(arith.evaluate(value, self.var))
            except arith.ArithError as exc:
                self._err_sink.write(f"bash: {exc}\n")
                return "0"
        if kind == "tilde":
            return self.vars.get("HOME", "/root")
        return value

    _err_sink: Buffer = Discard()
    status_from_subst: int | None = None

    def var(self, spec: str) -> str:
        if spec in self.vars and spec.isascii() and spec.isidentifier():  # a plain $name, set
            return self.vars[spec] or ""
        if spec in SPECIAL_PARAMETERS:
            return {
                "?": str(self.status),
                "$": str(getattr(self, "pid", 4242)),
                "#": "0",
                "0": "bash",
                "!": "4243",
                "-": "hB",
                "@": "",
                "*": "",
            }[spec]
        if spec.startswith("#") and len(spec) > 1:
            return str(len(self.var(spec[1:])))
        name, op, default = VAR_SPEC.match(spec).groups()
        value = None if name.isdigit() else self.vars.get(name)
        if op in (":-", "-"):
            return default if (value is None or (op == ":-" and value == "")) else value
        if op in (":=", "="):
            if value is None or (op == ":=" and value == ""):
                self.vars[name] = default
                return default
        if op in (":+", "+"):
            return default if value else ""
        return value or ""

    async def expand_str(self, word: Word) -> str:
        parts = word.parts
        if len(parts) == 1 and parts[0][0] == "lit":  # literal text: itself (the loop's answer)
            return parts[0][1]
        out = []
        for kind, value, _ in word.parts:
            if kind == "lit":
                out.append(value)
            elif kind == "var":  # without expand_part's coroutine (most parts that are not text)
                out.append(self.var(value))
            else:
                out.append(await self.expand_part(kind, value))
        return "".join(out)

    async def expand_words(self, words: list[Word]) -> list[str]:
        result: list[str] = []
        for word in words:
            plan = word.plan
            if plan.__class__ is tuple:  # literal text (expand_fields' first case, without its coroutine)
                result.extend(plan)
            else:
                result.extend(await self.expand_fields(word))
        return result

    async def expand_fields(self, word: Word) -> list[str]:
        plan = word.plan
        if plan is None:
            plan = word.plan = expansion_plan(word.parts)
        if plan.__class__ is tuple:  # literal text: the same fields every time
            return list(plan)
        parts = word.parts
        if plan is QUOTED:  # "a $b $(c)": one field, never split nor globbed
            return [
                "".join(
                    [
                        value
                        if kind == "lit"
                        else self.var(value)
                        if kind == "var"
                        else await self.expand_part(kind, value)
                        for kind, value, _ in parts
                    ]
                )
            ]
        if plan is LONE:
            kind, value, _ = parts[0]
            out = []
            text = self.var(value) if kind == "var" else await self.expand_part(kind, value)
            for chunk in FIELD_SEPARATORS.split(text):
                if not chunk:
                    continue
                if GLOB_CHARS.search(chunk) is not None:
                    out.extend(self._matches_or(chunk, chunk))
                else:
                    out.append(chunk)
            return out
        if plan is JOINED:  # text and $x: one field unless an unquoted $x splits or globs
            texts = []
            kept = False
            for kind, value, quoted in parts:
                if kind == "lit":
                    texts.append(value)
                    kept = kept or quoted
                    continue
                text = self.var(value)
                if not quoted and (FIELD_SEPARATORS.search(text) or GLOB_CHARS.search(text)):
                    break  # the general path below (a $x read again gives the same text)
                texts.append(text)
                kept = kept or quoted
            else:
                joined = "".join(texts)
                return [joined] if joined or kept else []
        fields: list[list[tuple[str, bool]]] = [[]]
        keep = [False]
        glob = [False]  # whether the field holds an unquoted glob character
        for kind, value, quoted in parts:
            if kind == "lit":
                fields[-1].append((value, quoted))
                keep[-1] = keep[-1] or quoted or bool(value)
                if not quoted and value and GLOB_CHARS.search(value) is not None:
                    glob[-1] = True
                continue
            text = self.var(value) if kind == "var" else await self.expand_part(kind, value)
            if quoted or kind == "tilde":
                fields[-1].append((text, True))
                keep[-1] = True
                continue
            chunks = FIELD_SEPARATORS.split(text)
            for n, chunk in enumerate(chunks):
                if n:
                    fields.append([])
                    keep.append(False)
                    glob.append(False)
                if chunk:
                    fields[-1].append((chunk, False))
                    keep[-1] = True
                    if GLOB_CHARS.search(chunk) is not None:
                        glob[-1] = True
        out: list[str] = []
        for segs, wanted, globbed in zip(fields, keep, glob):
            if not wanted:
                continue
            text = "".join([t for t, _ in segs])
            if globbed:
                pattern = "".join([t if not q else GLOB_ESCAPE.sub(r"[\1]", t) for t, q in segs])
                out.extend(self._matches_or(pattern, text))
            else:
                out.append(text)
        return out

    def _matches_or(self, pattern: str, text: str) -> list[str]:
        """A field with a glob character: the names it matches, else the field itself."""
        return self.machine.fs.glob(pattern, self.cwd) or [text]
