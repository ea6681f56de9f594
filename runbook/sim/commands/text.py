"""Text tools: cat grep head tail wc sort uniq cut tr tee seq basename dirname."""

from __future__ import annotations

import posixpath
import re

from ..vfs import FsError
from .base import Ctx, join_lines, read_inputs, split_opts

POSIX_CLASSES = {
    "[:digit:]": "0-9",
    "[:space:]": r" \t\n\r\f\v",
    "[:alpha:]": "a-zA-Z",
    "[:alnum:]": "a-zA-Z0-9",
    "[:upper:]": "A-Z",
    "[:lower:]": "a-z",
    "[:xdigit:]": "0-9A-Fa-f",
    "[:blank:]": r" \t",
    "[:punct:]": r"!-/:-@\[-`{-~",
}


def to_python_regex(pattern: str, extended: bool) -> str:
    for k, v in POSIX_CLASSES.items():
        pattern = pattern.replace(k, v)
    if extended:
        return pattern
    out, i = [], 0
    while i < len(pattern):  # BRE: \( \) \| \{ \} \+ \? are special, bare ones literal
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            n = pattern[i + 1]
            out.append(n if n in "()|{}+?" else "\\" + n)
            i += 2
            continue
        out.append("\\" + c if c in "()|{}+?" else c)
        i += 1
    return "".join(out)


def cat(ctx: Ctx, args, io) -> int:
    opts, files = split_opts(args)
    inputs, status = read_inputs(ctx, "cat", files, io)
    for _, text in inputs:
        if opts.get("n"):
            text = join_lines(f"{n:>6}\t{line}" for n, line in enumerate(text.splitlines(), 1))
        io.out.write(text)
    return status


def _take_patterns(args: list[str]) -> tuple[list[str], list[str]]:
    """The -e PATTERNs taken out of grep's arguments: (patterns, the rest in order)."""
    if not any(a[:2] == "-e" for a in args):  # none (a `grep -H -v P pkeys/*`'s 898 arguments)
        return [], list(args)
    patterns, clean, i = [], [], 0
    n_args = len(args)
    while i < n_args:
        a = args[i]
        if a[:1] != "-":  # an operand (most of a `grep . pkeys/*`'s): kept as it is
            clean.append(a)
            i += 1
            continue
        if a == "-e" and i + 1 < n_args:
            patterns.append(args[i + 1])
            i += 2
            continue
        if a.startswith("-e") and len(a) > 2:
            patterns.append(a[2:])
        else:
            clean.append(a)
        i += 1
    return patterns, clean


def grep(ctx: Ctx, args, io) -> int:
    patterns, clean = _take_patterns(args)
    opts, rest = split_opts(clean, with_value="mABC")
    if not patterns:
        if not rest:
            io.err.write("Usage: grep [OPTION]... PATTERNS [FILE]...\n")
            return 2
        patterns, rest = [rest[0]], rest[1:]
    flags = re.I if opts.get("i") else 0
    compiled = []
    for p in patterns:
        for alt in p.split("\n"):
            src = re.escape(alt) if opts.get("F") else to_python_regex(alt, bool(opts.get("E")))
            if opts.get("w"):
                src = rf"\b(?:{src})\b"
            if opts.get("x"):
                src = rf"^(?:{src})$"
            try:
                compiled.append(re.compile(src, flags))
            except re.error:
                io.err.write("grep: Unmatched ( or \\(\n")
                return 2
    inputs, status = read_inputs(ctx, "grep", rest, io)
    many = len(inputs) > 1 and not opts.get("h") or opts.get("H")
    limit = int(opts["m"]) if "m" in opts else None
    after = int(opts.get("A") or opts.get("C") or 0)
    # the options, asked once rather than on every line (a `grep . pkeys/*` reads a thousand files)
    invert, quiet, counting, listing = bool(opts.get("v")), opts.get("q"), opts.get("c"), opts.get("l")
    only, numbered = opts.get("o") and not invert, opts.get("n")
    single = compiled[0].search if len(compiled) == 1 else None
    found = False
    if single is not None and not (
        quiet or counting or listing or only or numbered or after or limit is not None
    ):
        # the plain case (a `grep -H -v PATTERN pkeys/*` over 896 files): each file's
        # matching lines, labelled, what the general loop below prints for them
        answers: dict[str, list[str]] = {}  # most of 896 PKey slots read the same "0x0000"
        for name, text in inputs:
            hits = answers.get(text)
            if hits is None:
                hits = answers[text] = [
                    line for line in text.splitlines() if (single(line) is None) == invert
                ]
            if hits:
                found = True
                label = ("(standard input)" if name == "-" else name) + ":" if many else ""
                io.out.write("".join([label + line + "\n" for line in hits]))
        inputs = []
    for name, text in inputs:
        label = "(standard input)" if name == "-" else name
        count, tail = 0, 0
        for n, line in enumerate(text.splitlines(), 1):
            hit = single(line) is not None if single else any(c.search(line) for c in compiled)
            if hit == invert:
                if tail and not counting and not quiet and not listing:
                    io.out.write((f"{label}-" if many else "") + line + "\n")
                    tail -= 1
                continue
            found = True
            count += 1
            tail = after
            if quiet:
                return 0
            if counting or listing:
                pass
            elif only:
                for c in compiled:
                    for m in c.finditer(line):
                        io.out.write((f"{label}:" if many else "") + m.group(0) + "\n")
            else:
                prefix = (f"{label}:" if many else "") + (f"{n}:" if numbered else "")
                io.out.write(prefix + line + "\n")
            if limit is not None and count >= limit:
                break
        if opts.get("c"):
            io.out.write((f"{label}:" if many else "") + f"{count}\n")
        if opts.get("l") and count:
            io.out.write(label + "\n")
    if status:
        return 2
    return 0 if found else 1


def _count_opt(args) -> tuple[int, list[str], bool]:
    n, rest, from_start = 10, [], False
    i = 0
    while i < len(args):
        a = args[i]
        if re.fullmatch(r"-\d+", a):
            n = int(a[1:])
        elif a in ("-n", "-c") and i + 1 < len(args):
            value = args[i + 1]
            from_start = value.startswith("+")
            n = int(value.lstrip("+-"))
            i += 1
        elif re.fullmatch(r"-n[+-]?\d+", a):
            from_start = a[2] == "+"
            n = int(a[2:].lstrip("+-"))
        else:
            rest.append(a)
        i += 1
    return n, rest, from_start


def head(ctx: Ctx, args, io) -> int:
    n, files, _ = _count_opt(args)
    inputs, status = read_inputs(ctx, "head", files, io)
    for name, text in inputs:
        if len(inputs) > 1:
            io.out.write(f"==> {name} <==\n")
        io.out.write(join_lines(text.splitlines()[:n]))
    return status


def tail(ctx: Ctx, args, io) -> int:
    n, files, from_start = _count_opt(args)
    inputs, status = read_inputs(ctx, "tail", files, io)
    if "-c" in args:  # the last N bytes (a progress line being written has no newline yet)
        for _, text in inputs:
            data = text.encode()
            io.out.write((data[n - 1 :] if from_start else data[-n:] if n else b"").decode(errors="replace"))
        return status
    for _, text in inputs:
        lines = text.splitlines()
        io.out.write(join_lines(lines[n - 1 :] if from_start else lines[-n:] if n else []))
    return status


def wc(ctx: Ctx, args, io) -> int:
    opts, files = split_opts(args)
    inputs, status = read_inputs(ctx, "wc", files, io)
    which = [k for k in "lwc" if opts.get(k)] or ["l", "w", "c"]
    for name, text in inputs:
        counts = {"l": text.count("\n"), "w": len(text.split()), "c": len(text.encode())}
        values = [counts[k] for k in which]
        if len(values) == 1:
            io.out.write(f"{values[0]}" + (f" {name}" if files else "") + "\n")
        else:
            io.out.write(" ".join(f"{v:>7}" for v in values) + (f" {name}" if files else "") + "\n")
    return status


def _sort_key(opts):
    field = None
    if "k" in opts:
        field = int(str(opts["k"]).split(",")[0].split(".")[0]) - 1
    sep = opts.get("t") if isinstance(opts.get("t"), str) else None

    def key(line: str):
        text = line
        if field is not None:
            parts = line.split(sep) if sep else line.split()
            text = parts[field] if field < len(parts) else ""
        if opts.get("n") or opts.get("g"):
            m = re.match(r"\s*-?\d+(?:\.\d+)?", text)
            return (float(m.group(0)) if m else 0.0, line)
        if opts.get("V"):
            return ([int(x) if x.isdigit() else x for x in re.split(r"(\d+)", text)], line)
        return (text, line)

    return key


def sort(ctx: Ctx, args, io) -> int:
    opts, files = split_opts(args, with_value="kt")
    inputs, status = read_inputs(ctx, "sort", files, io)
    lines = [line for _, text in inputs for line in text.splitlines()]
    lines.sort(key=_sort_key(opts), reverse=bool(opts.get("r")))
    if opts.get("u"):
        seen, uniq = set(), []
        for line in lines:
            if line not in seen:
                seen.add(line)
                uniq.append(line)
        lines = uniq
    io.out.write(join_lines(lines))
    return status


def uniq(ctx: Ctx, args, io) -> int:
    opts, files = split_opts(args)
    inputs, status = read_inputs(ctx, "uniq", files[:1], io)
    groups: list[list] = []
    for line in inputs[0][1].splitlines() if inputs else []:
        if groups and groups[-1][0] == line:
            groups[-1][1] += 1
        else:
            groups.append([line, 1])
    for line, n in groups:
        if opts.get("d") and n < 2 or opts.get("u") and n > 1:
            continue
        io.out.write(f"{n:>7} {line}\n" if opts.get("c") else line + "\n")
    return status


def cut(ctx: Ctx, args, io) -> int:
    opts, files = split_opts(args, with_value="dfc")
    sep = opts.get("d", "\t") if isinstance(opts.get("d", "\t"), str) else "\t"
    spec = opts.get("f") or opts.get("c")
    if not isinstance(spec, str):
        io.err.write("cut: you must specify a list of bytes, characters, or fields\n")
        return 1
    wanted: list[int] = []
    for part in spec.split(","):
        lo, dash, hi = part.partition("-")
        a = int(lo) if lo else 1
        b = int(hi) if hi else (a if not dash else 10000)
        wanted.extend(range(a, b + 1))
    inputs, status = read_inputs(ctx, "cut", files, io)
    for _, text in inputs:
        for line in text.splitlines():
            if "c" in opts:
                io.out.write("".join(line[i - 1] for i in wanted if i <= len(line)) + "\n")
            elif sep not in line:
                io.out.write(line + "\n")
            else:
                fields = line.split(sep)
                io.out.write(sep.join(fields[i - 1] for i in wanted if i <= len(fields)) + "\n")
    return status


def tr(ctx: Ctx, args, io) -> int:
    opts, sets = split_opts(args)
    text = io.stdin.read_all()

    def expand(s: str) -> str:
        s = (
            s.replace("[:upper:]", "A-Z")
            .replace("[:lower:]", "a-z")
            .replace("\\n", "\n")
            .replace("\\t", "\t")
            .replace("\\r", "\r")
        )
        return re.sub(r"(.)-(.)", lambda m: "".join(chr(c) for c in range(ord(m[1]), ord(m[2]) + 1)), s)

    if opts.get("d") and sets:
        drop = set(expand(sets[0]))
        io.out.write("".join(c for c in text if c not in drop))
    elif opts.get("s") and len(sets) == 1:
        chars = set(expand(sets[0]))
        io.out.write(
            re.sub("|".join(f"({re.escape(c)})+" for c in chars) or "(?!)", lambda m: m.group(0)[0], text)
        )
    elif len(sets) == 2:
        a, b = expand(sets[0]), expand(sets[1])
        b = b + b[-1:] * (len(a) - len(b))
        io.out.write(text.translate(str.maketrans(a, b[: len(a)])))
    else:
        io.err.write("tr: missing operand\n")
        return 1
    return 0


def tee(ctx: Ctx, args, io) -> int:
    opts, files = split_opts(args)
    text = io.stdin.read_all()
    status = 0
    for f in files:
        try:
            ctx.fs.check_writable(ctx.path(f))
            ctx.fs.write(ctx.path(f), text, append=bool(opts.get("a")))
        except FsError as exc:
            io.err.write(f"tee: {f}: {exc}\n")
            status = 1
    if files:
        ctx.machine.changed()
    io.out.write(text)
    return status


def seq(ctx: Ctx, args, io) -> int:
    try:
        nums = [int(a) for a in args]
    except ValueError:
        io.err.write(f"seq: invalid argument: {args}\n")
        return 1
    first, step, last = (
        (1, 1, nums[0]) if len(nums) == 1 else (nums[0], 1, nums[1]) if len(nums) == 2 else nums
    )
    io.out.write(join_lines(str(x) for x in range(first, last + (1 if step > 0 else -1), step)))
    return 0


COMMANDS = {
    "cat": cat,
    "grep": grep,
    "egrep": lambda c, a, i: grep(c, ["-E"] + a, i),
    "head": head,
    "tail": tail,
    "wc": wc,
    "sort": sort,
    "uniq": uniq,
    "cut": cut,
    "tr": tr,
    "tee": tee,
    "seq": seq,
    "basename": lambda c, a, i: (i.out.write(posixpath.basename(a[0].rstrip("/")) + "\n"), 0)[1] if a else 1,
    "dirname": lambda c, a, i: (
        (i.out.write((posixpath.dirname(a[0].rstrip("/")) or ".") + "\n"), 0)[1] if a else 1
    ),
}
