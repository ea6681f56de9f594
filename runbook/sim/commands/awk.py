"""A small awk: -F, BEGIN/END, /re/ and comparison patterns, print, printf,
assignments (= += ++), next, exit; fields $N $NF $(expr), NR, NF, concatenation,
arithmetic. Enough for the one-liners runbooks use (`awk '{print $2}'`,
`awk -F: '/version/ {print $2}'`, `awk '{s+=$1} END {print s}'`)."""

from __future__ import annotations

import re

from .base import Ctx, read_inputs

TOKEN = re.compile(
    r'\s*(?:(?P<num>\d+(?:\.\d+)?)|(?P<str>"(?:\\.|[^"\\])*")|(?P<re>/(?:\\.|[^/\\])+/)'
    r"|(?P<op>\+\+|\+=|-=|==|!=|<=|>=|!~|&&|\|\||[-+*/%<>!~=(),;{}$])|(?P<name>[A-Za-z_]\w*))"
)


class AwkError(Exception):
    pass


class _Next(Exception):
    pass


class _Exit(Exception):
    pass


def tokenize(src: str) -> list[tuple[str, str]]:
    out, i = [], 0
    while i < len(src):
        if src[i] in " \t":
            i += 1
            continue
        if src[i] == "\n":
            out.append(("op", ";"))
            i += 1
            continue
        m = TOKEN.match(src, i)
        if not m or m.end() == i:
            raise AwkError(f"syntax error at source line 1 near {src[i : i + 10]!r}")
        kind = m.lastgroup
        value = m.group(kind)
        # a / after a value is division, not a regex
        if kind == "re" and out and (out[-1][0] in ("num", "str", "name") or out[-1][1] == ")"):
            out.append(("op", "/"))
            i = m.start(kind) + 1
            continue
        out.append((kind, value))
        i = m.end()
    return out


class Program:
    def __init__(self, src: str):
        self.toks = tokenize(src)
        self.i = 0
        self.rules: list[tuple[object, list]] = []
        while self.peek():
            if self.peek() == ("op", ";"):
                self.i += 1
                continue
            pattern = None
            if self.peek() != ("op", "{"):
                pattern = (
                    "BEGIN"
                    if self.peek() == ("name", "BEGIN")
                    else "END"
                    if self.peek() == ("name", "END")
                    else None
                )
                if pattern:
                    self.i += 1
                else:
                    pattern = self.expr()
            action = self.block() if self.peek() == ("op", "{") else [("print", [])]
            self.rules.append((pattern, action))

    def peek(self, k: int = 0):
        return self.toks[self.i + k] if self.i + k < len(self.toks) else None

    def take(self, value: str | None = None):
        tok = self.peek()
        if tok is None or (value is not None and tok[1] != value):
            raise AwkError(f"syntax error: expected {value!r}")
        self.i += 1
        return tok

    def block(self) -> list:
        self.take("{")
        stmts = []
        while self.peek() != ("op", "}"):
            if self.peek() == ("op", ";"):
                self.i += 1
                continue
            stmts.append(self.statement())
        self.take("}")
        return stmts

    def statement(self):
        tok = self.peek()
        if tok == ("name", "print") or tok == ("name", "printf"):
            self.i += 1
            args = []
            while self.peek() and self.peek()[1] not in (";", "}"):
                args.append(self.expr())
                if self.peek() == ("op", ","):
                    self.i += 1
            return (tok[1], args)
        if tok == ("name", "next"):
            self.i += 1
            return ("next",)
        if tok == ("name", "exit"):  # stop reading input; END still runs (POSIX awk)
            self.i += 1
            return ("exit",)
        if tok and tok[0] == "name" and self.peek(1) and self.peek(1)[1] in ("=", "+=", "-=", "++"):
            self.i += 2
            op = self.toks[self.i - 1][1]
            return ("assign", tok[1], op, None if op == "++" else self.expr())
        return ("expr", self.expr())

    # expressions, lowest precedence first
    def expr(self):
        left = self.and_expr()
        while self.peek() == ("op", "||"):
            self.i += 1
            left = ("or", left, self.and_expr())
        return left

    def and_expr(self):
        left = self.match_expr()
        while self.peek() == ("op", "&&"):
            self.i += 1
            left = ("and", left, self.match_expr())
        return left

    def match_expr(self):
        left = self.compare()
        if self.peek() and self.peek()[1] in ("~", "!~"):
            op = self.take()[1]
            return ("match", op, left, self.compare())
        return left

    def compare(self):
        left = self.concat()
        if self.peek() and self.peek()[1] in ("==", "!=", "<", "<=", ">", ">="):
            op = self.take()[1]
            return ("cmp", op, left, self.concat())
        return left

    def concat(self):
        left = self.additive()
        while self.peek() and (self.peek()[0] in ("num", "str", "name") or self.peek()[1] in ("$", "(")):
            left = ("cat", left, self.additive())
        return left

    def additive(self):
        left = self.term()
        while self.peek() and self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            left = ("arith", op, left, self.term())
        return left

    def term(self):
        left = self.unary()
        while self.peek() and self.peek()[1] in ("*", "/", "%"):
            op = self.take()[1]
            left = ("arith", op, left, self.unary())
        return left

    def unary(self):
        tok = self.take()
        kind, value = tok
        if value == "!" and kind == "op":
            return ("not", self.unary())
        if value == "-" and kind == "op":
            return ("arith", "-", ("num", 0.0), self.unary())
        if value == "$" and kind == "op":
            return ("field", self.unary())
        if value == "(" and kind == "op":
            inner = self.expr()
            self.take(")")
            return inner
        if kind == "num":
            return ("num", float(value))
        if kind == "str":
            return ("str", re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), value[1:-1]))
        if kind == "re":
            return ("re", value[1:-1])
        if kind == "name":
            return ("var", value)
        raise AwkError(f"syntax error near {value!r}")


NUMBER_PREFIX = re.compile(r"\s*[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
NUMERIC = re.compile(r"\s*-?\d+(\.\d+)?\s*")  # a value compared as a number


def _num(v) -> float:
    if isinstance(v, float):
        return v
    m = NUMBER_PREFIX.match(str(v))
    return float(m.group(0)) if m else 0.0


def _str(v) -> str:
    if isinstance(v, float):
        return str(int(v)) if v == int(v) else f"{v:.6g}"
    return v


class Runner:
    def __init__(self, prog: Program, fs: str | None, out):
        self.prog, self.fs, self.out = prog, fs, out
        self.vars: dict[str, object] = {"NR": 0.0, "NF": 0.0}
        self.fields: list[str] = [""]

    def set_record(self, line: str) -> None:
        parts = (
            line.split()
            if self.fs in (None, " ")
            else re.split(self.fs, line)
            if len(self.fs) > 1
            else line.split(self.fs)
        )
        self.fields = [line] + parts
        self.vars["NF"] = float(len(parts))

    def ev(self, node):
        kind = node[0]
        if kind == "num":
            return node[1]
        if kind == "str":
            return node[1]
        if kind == "re":
            return 1.0 if re.search(node[1], self.fields[0]) else 0.0
        if kind == "var":
            return self.vars.get(node[1], "")
        if kind == "field":
            idx = int(_num(self.ev(node[1])))
            return self.fields[idx] if 0 <= idx < len(self.fields) else ""
        if kind == "cat":
            return _str(self.ev(node[1])) + _str(self.ev(node[2]))
        if kind == "arith":
            a, b = _num(self.ev(node[2])), _num(self.ev(node[3]))
            op = node[1]
            return (
                a + b
                if op == "+"
                else a - b
                if op == "-"
                else a * b
                if op == "*"
                else ((a / b if op == "/" else a % b) if b else 0.0)
            )
        if kind == "cmp":
            a, b = self.ev(node[2]), self.ev(node[3])
            numeric = all(isinstance(x, float) or NUMERIC.fullmatch(str(x)) for x in (a, b))
            x, y = (_num(a), _num(b)) if numeric else (_str(a), _str(b))
            return float(
                {"==": x == y, "!=": x != y, "<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[node[1]]
            )
        if kind == "match":
            pattern = node[3][1] if node[3][0] == "re" else _str(self.ev(node[3]))
            hit = re.search(pattern, _str(self.ev(node[2]))) is not None
            return float(hit if node[1] == "~" else not hit)
        if kind == "and":
            return float(self.truth(node[1]) and self.truth(node[2]))
        if kind == "or":
            return float(self.truth(node[1]) or self.truth(node[2]))
        if kind == "not":
            return float(not self.truth(node[1]))
        raise AwkError(f"cannot evaluate {kind}")

    def truth(self, node) -> bool:
        v = self.ev(node)
        return bool(v) if isinstance(v, float) else v != ""

    def run_action(self, stmts) -> None:
        for st in stmts:
            if st[0] == "print":
                values = [_str(self.ev(a)) for a in st[1]] or [self.fields[0]]
                self.out.write(" ".join(values) + "\n")
            elif st[0] == "printf":
                fmt, *args = [self.ev(a) for a in st[1]]
                conv = iter(args)
                text = re.sub(
                    r"%([-0-9.]*)([sdif%])",
                    lambda m: (
                        "%"
                        if m[2] == "%"
                        else (
                            ("%" + m[1] + ("d" if m[2] == "i" else m[2]))
                            % (
                                int(_num(next(conv, 0.0)))
                                if m[2] in "di"
                                else _num(next(conv, 0.0))
                                if m[2] == "f"
                                else _str(next(conv, ""))
                            )
                        )
                    ),
                    _str(fmt),
                )
                self.out.write(text.replace("\\n", "\n"))
            elif st[0] == "assign":
                _, name, op, expr = st
                cur = self.vars.get(name, 0.0)
                if op == "++":
                    self.vars[name] = _num(cur) + 1
                elif op == "=":
                    self.vars[name] = self.ev(expr)
                else:
                    value = _num(self.ev(expr))
                    self.vars[name] = _num(cur) + value if op == "+=" else _num(cur) - value
            elif st[0] == "next":
                raise _Next()
            elif st[0] == "exit":
                raise _Exit()
            else:
                self.ev(st[1])


def awk(ctx: Ctx, args, io) -> int:
    fs, i = None, 0
    assigned: dict[str, str] = {}
    while i < len(args) and args[i].startswith("-") and args[i] != "-":
        if args[i] == "-F" and i + 1 < len(args):
            fs, i = args[i + 1], i + 2
        elif args[i].startswith("-F"):
            fs, i = args[i][2:], i + 1
        elif args[i] == "-v" and i + 1 < len(args) and "=" in args[i + 1]:
            name, _, value = args[i + 1].partition("=")
            assigned[name] = value
            i += 2
        else:
            i += 1
    if i >= len(args):
        io.err.write("usage: awk [-F fs][-v var=value][prog | -f progfile][file ...]\n")
        return 2
    fs = {"\\t": "\t"}.get(fs, fs)
    try:
        prog = Program(args[i])
    except AwkError as exc:
        io.err.write(f"awk: {exc}\n")
        return 2
    inputs, status = read_inputs(ctx, "awk", args[i + 1 :], io)
    run = Runner(prog, fs, io.out)
    for name, value in assigned.items():  # -v var=value: a number when it looks like one (awk's strnum)
        try:
            run.vars[name] = float(value)
        except ValueError:
            run.vars[name] = value
    try:
        for pattern, action in prog.rules:
            if pattern == "BEGIN":
                run.run_action(action)
        try:
            for _, text in inputs:
                for line in text.splitlines():
                    run.vars["NR"] = _num(run.vars["NR"]) + 1
                    run.set_record(line)
                    try:
                        for pattern, action in prog.rules:
                            if pattern in ("BEGIN", "END"):
                                continue
                            if pattern is None or run.truth(pattern):
                                run.run_action(action)
                    except _Next:
                        continue
        except _Exit:
            pass
        for pattern, action in prog.rules:
            if pattern == "END":
                run.run_action(action)
    except AwkError as exc:
        io.err.write(f"awk: {exc}\n")
        return 2
    return status


COMMANDS = {"awk": awk, "gawk": awk}
