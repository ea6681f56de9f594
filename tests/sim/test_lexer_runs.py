"""The lexer's runs (sim/shell/lexer.py: a run of plain characters taken at
once, operators tried only where one can start) and the words' cached
literal() give the trees the character-by-character lexer gave, on the
shipped steps' scripts and the engine's wrappers."""

from __future__ import annotations

import re
from pathlib import Path

from runbook.definition.loader import load_runbook
from runbook.engine import detached
from runbook.engine.kinds import launchjob
from runbook.sim.shell.lexer import META, OPERATORS, Lexer, ShellSyntaxError, Token
from runbook.sim.shell.nodes import Part, Word
from runbook.sim.shell.parser import Parser

STEPS = Path(__file__).resolve().parents[2] / "steps"


class CharByCharLexer(Lexer):
    """next(), _word() and _dquoted() as they were: one character at a time."""

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
                buf.append(c)
                self.i += 1
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
                buf.append(c)
                self.i += 1
        if buf or not parts:
            parts.append(("lit", "".join(buf), True))
        return parts


class CharByCharParser(Parser):
    def __init__(self, src: str):
        self.lx = CharByCharLexer(src)
        self.tok = self.lx.next()


def scripts() -> list[str]:
    texts = []
    for step in load_runbook(STEPS).steps:
        for action in (step.verify, step.apply, step.rollback):
            if action is not None and action.run:
                texts.append(action.run)
                texts.append(re.sub(r"\{\{.*?\}\}", "mlx5_0", action.run))
    texts.append(detached.wrap("dcgmi diag -r 1", "20261201-1", "dcgm-diag", "verify"))
    texts.append(detached.stop_command("20261201-1", "dcgm-diag", "verify"))
    texts.append(launchjob.wrap("mpirun -np 2 hostname", "/var/tmp/runbook-launch/r.s.x", ["gpu01", "gpu02"]))
    texts.append(launchjob.stop_step_command("20261201-1", "nccl"))
    texts += [
        'a="x\\y \\$z $q ${r:-s} `t` $(u "v")" b\\ c \'d e\' ~/f ~ g~ 2>&1 3<x >|y <<-EOF\n\tbody $x\n\tEOF\n',
        'for i in 1 2; do echo "$i"; done | tee -a /tmp/x && { true; } || ( false ); echo "\\q\\"" \\\nnext',
        "echo 'unterminated",
        'echo "unterminated',
        "echo $((1 + (2 * 3))) $((  )) ${#x} $? $$ $1 $",
    ]
    return texts


def tree(parser_class, text):
    try:
        return parser_class(text).program()
    except ShellSyntaxError as exc:
        return ("error", str(exc))


def test_the_lexer_s_runs_give_the_character_by_character_trees():
    checked = 0
    for text in scripts():
        assert tree(Parser, text) == tree(CharByCharParser, text), text
        checked += 1
    assert checked > 150
