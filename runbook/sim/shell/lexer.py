"""Tokens of the small shell: words (with their quoting kept), operators,
newlines. Here-document bodies are read when the newline after their
`<<DELIM` is reached, as sh does."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .nodes import Heredoc, Part, Word

OPERATORS = ["&&", "||", ";;", "<<-", "<<", ">>", ">&", "<&", "&>", ">|", "|", "&", ";", "<", ">", "(", ")"]
OPERATOR_STARTS = frozenset(op[0] for op in OPERATORS)
META = set(" \t\n|&;<>()")
# Runs of characters the word loops would take one by one into their buffer:
# taken at once (a command line is lexed at ~1 us a character otherwise).
PLAIN_RUN = re.compile(r"[^ \t\n|&;<>()\\'\"$`]+")  # in a word: not META, \ ' " $ or `
DQUOTED_RUN = re.compile(r'[^"\\$`]+')  # inside "...": not " \ $ or `


class ShellSyntaxError(Exception):
    pass


@dataclass
class Token:
    kind: str  # WORD IONUM OP NL EOF
    value: str = ""
    word: Word | None = None


class Lexer:
    def __init__(self, src: str):
        self.s = src
        self.i = 0
        self.pending: list[Heredoc] = []

    def next(self) -> Token:
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c in " \t":
                self.i += 1
            elif c == "\\" and s.startswith("\\\n", self.i):
                self.i += 2
            elif c == "#":
                while self.i < len(s) and s[self.i] != "\n":
                    self.i += 1
            else:
                break
        if self.i >= len(s):
            if self.pending:
                self._read_heredocs()
            return Token("EOF")
        c = s[self.i]
        if c == "\n":
            self.i += 1
            self._read_heredocs()
            return Token("NL", "\n")
        if c in OPERATOR_STARTS:
            for op in OPERATORS:
                if s.startswith(op, self.i):
                    self.i += len(op)
                    return Token("OP", op)
        word = self._word()
        lit = word.literal()
        if lit is not None and lit.isdigit() and self.i < len(s) and s[self.i] in "<>":
            return Token("IONUM", lit, word)
        return Token("WORD", lit if lit is not None else "", word)

    # ---- words ------------------------------------------------------------
    def _word(self) -> Word:
        s = self.s
        parts: list[Part] = []
        buf: list[str] = []

        def flush() -> None:
            if buf:
                parts.append(("lit", "".join(buf), False))
                buf.clear()

        if s.startswith("~", self.i) and (
            self.i + 1 >= len(s) or s[self.i + 1] in "/" or s[self.i + 1] in META
        ):
            parts.append(("tilde", "", False))
            self.i += 1
        while self.i < len(s):
            c = s[self.i]
            if c in META:
                break
            if c == "\\":
                if s.startswith("\\\n", self.i):
                    self.i += 2
                    continue
                flush()
                parts.append(("lit", s[self.i + 1 : self.i + 2], True))
                self.i += 2
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise ShellSyntaxError("unexpected EOF while looking for matching `''")
                flush()
                parts.append(("lit", s[self.i + 1 : end], True))
                self.i = end + 1
            elif c == '"':
                flush()
                self.i += 1
                parts.extend(self._dquoted())
            elif c == "$":
                flush()
                parts.append(self._dollar(False))
            elif c == "`":
                flush()
                parts.append(("cmd", self._backtick(), False))
            else:
                run = PLAIN_RUN.match(s, self.i)  # at least c
                buf.append(run.group())
                self.i = run.end()
        flush()
        return Word(parts)

    def _dquoted(self) -> list[Part]:
        s = self.s
        parts: list[Part] = []
        buf: list[str] = []
        while True:
            if self.i >= len(s):
                raise ShellSyntaxError("unexpected EOF while looking for matching `\"'")
            c = s[self.i]
            if c == '"':
                self.i += 1
                break
            if c == "\\" and self.i + 1 < len(s) and s[self.i + 1] in '$`"\\\n':
                if s[self.i + 1] != "\n":
                    buf.append(s[self.i + 1])
                self.i += 2
            elif c == "$":
                if buf:
                    parts.append(("lit", "".join(buf), True))
                    buf = []
                parts.append(self._dollar(True))
            elif c == "`":
                if buf:
                    parts.append(("lit", "".join(buf), True))
                    buf = []
                parts.append(("cmd", self._backtick(), True))
            else:
                run = DQUOTED_RUN.match(s, self.i)  # None at a backslash kept as it is
                if run is None:
                    buf.append(c)
                    self.i += 1
                else:
                    buf.append(run.group())
                    self.i = run.end()
        if buf or not parts:
            parts.append(("lit", "".join(buf), True))
        return parts

    def _dollar(self, quoted: bool) -> Part:
        s = self.s
        i = self.i + 1
        if s.startswith("((", i):
            end = _matching(s, i + 1)
            if end < 0 or not s.startswith("))", end):
                raise ShellSyntaxError("unexpected EOF while looking for matching `))'")
            self.i = end + 2
            return ("arith", s[i + 2 : end], quoted)
        if s.startswith("(", i):
            end = _matching(s, i)
            if end < 0:
                raise ShellSyntaxError("unexpected EOF while looking for matching `)'")
            self.i = end + 1
            return ("cmd", s[i + 1 : end], quoted)
        if s.startswith("{", i):
            end = s.find("}", i)
            if end < 0:
                raise ShellSyntaxError("unexpected EOF while looking for matching `}'")
            self.i = end + 1
            return ("var", s[i + 1 : end], quoted)
        if i < len(s) and s[i] in "?$#@*!0123456789-":
            self.i = i + 1
            return ("var", s[i], quoted)
        j = i
        while j < len(s) and (s[j].isalnum() or s[j] == "_"):
            j += 1
        if j == i:
            self.i = i
            return ("lit", "$", quoted)
        self.i = j
        return ("var", s[i:j], quoted)

    def _backtick(self) -> str:
        end = self.s.find("`", self.i + 1)
        if end < 0:
            raise ShellSyntaxError("unexpected EOF while looking for matching ``'")
        src = self.s[self.i + 1 : end]
        self.i = end + 1
        return src

    def _read_heredocs(self) -> None:
        s = self.s
        for doc in self.pending:
            lines: list[str] = []
            while self.i < len(s):
                end = s.find("\n", self.i)
                line = s[self.i :] if end < 0 else s[self.i : end]
                self.i = len(s) if end < 0 else end + 1
                check = line.lstrip("\t") if doc.strip_tabs else line
                if check == doc.delimiter:
                    break
                lines.append(check)
            doc.body = "".join(line + "\n" for line in lines)
        self.pending = []


def heredoc_parts(body: str) -> Word:
    """An unquoted here-document body: $ expansions and `...` apply, quotes do not."""
    lx = Lexer(body)
    parts: list[Part] = []
    buf: list[str] = []
    while lx.i < len(body):
        c = body[lx.i]
        if c == "\\" and lx.i + 1 < len(body) and body[lx.i + 1] in "$`\\\n":
            if body[lx.i + 1] != "\n":
                buf.append(body[lx.i + 1])
            lx.i += 2
        elif c in "$`":
            if buf:
                parts.append(("lit", "".join(buf), True))
                buf = []
            parts.append(lx._dollar(True) if c == "$" else ("cmd", lx._backtick(), True))
        else:
            buf.append(c)
            lx.i += 1
    if buf:
        parts.append(("lit", "".join(buf), True))
    return Word(parts)


def _matching(s: str, open_at: int) -> int:
    """Index of the ')' matching the '(' at open_at, skipping quoted text; -1 if none."""
    depth = 0
    i = open_at
    while i < len(s):
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            end = s.find("'", i + 1)
            if end < 0:
                return -1
            i = end + 1
            continue
        if c == '"':
            i += 1
            while i < len(s) and s[i] != '"':
                i += 2 if s[i] == "\\" else 1
            i += 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1
