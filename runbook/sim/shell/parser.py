"""Recursive-descent parser: lists, && ||, pipelines, redirections, here-documents,
for / if / while / until, { } groups and ( ) subshells."""

from __future__ import annotations

import functools
import re

from .lexer import Lexer, ShellSyntaxError, Token
from .nodes import AndOr, CmdList, For, Group, Heredoc, If, Pipeline, Redir, Simple, While, Word

REDIR_OPS = {">", ">>", ">|", "<", "<<", "<<-", ">&", "<&", "&>"}
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


def parse(src: str) -> CmdList:
    """The tree of a command line, parsed once per distinct line: the runbook sends
    the same lines to every node, and a loop runs its $(...) on every turn. The tree
    is shared, so nothing may change it (the interpreter only reads it)."""
    return _parse_cached(src)


@functools.lru_cache(maxsize=4096)
def _parse_cached(src: str) -> CmdList:
    return Parser(src).program()  # a syntax error is raised again each time, never cached


class Parser:
    def __init__(self, src: str):
        self.lx = Lexer(src)
        self.tok: Token = self.lx.next()

    # ---- helpers ------------------------------------------------------------
    def advance(self) -> Token:
        tok, self.tok = self.tok, self.lx.next()
        return tok

    def is_word(self, *values: str) -> bool:
        return self.tok.kind == "WORD" and self.tok.word.literal() in values

    def is_op(self, *values: str) -> bool:
        return self.tok.kind == "OP" and self.tok.value in values

    def skip_newlines(self) -> None:
        while self.tok.kind == "NL":
            self.advance()

    def expect_word(self, value: str) -> None:
        if not self.is_word(value):
            raise self.unexpected()
        self.advance()

    def unexpected(self) -> ShellSyntaxError:
        t = self.tok
        text = (
            {"EOF": "end of file", "NL": "newline"}.get(t.kind)
            or t.value
            or (t.word and t.word.text())
            or "?"
        )
        if t.kind == "EOF":
            return ShellSyntaxError("syntax error: unexpected end of file")
        return ShellSyntaxError(f"syntax error near unexpected token `{text}'")

    # ---- grammar ------------------------------------------------------------
    def program(self) -> CmdList:
        body = self.cmd_list(())
        if self.tok.kind != "EOF":
            raise self.unexpected()
        return body

    def cmd_list(self, stop: tuple[str, ...]) -> CmdList:
        out = CmdList()
        self.skip_newlines()
        while self.tok.kind != "EOF" and not self.is_op(")") and not self.is_word(*stop):
            item = self.and_or()
            background = False
            if self.is_op(";", "&"):
                background = self.advance().value == "&"
            elif self.tok.kind == "NL":
                self.advance()
            elif self.tok.kind != "EOF" and not self.is_op(")") and not self.is_word(*stop):
                raise self.unexpected()
            out.items.append((item, background))
            self.skip_newlines()
        return out

    def and_or(self) -> AndOr:
        node = AndOr(self.pipeline())
        while self.is_op("&&", "||"):
            op = self.advance().value
            self.skip_newlines()
            node.rest.append((op, self.pipeline()))
        return node

    def pipeline(self) -> Pipeline:
        negate = False
        if self.is_word("!"):
            negate = True
            self.advance()
        cmds = [self.command()]
        while self.is_op("|"):
            self.advance()
            self.skip_newlines()
            cmds.append(self.command())
        return Pipeline(cmds, negate)

    def command(self):
        if self.is_word("for"):
            node = self.for_loop()
        elif self.is_word("if"):
            node = self.if_clause()
        elif self.is_word("while", "until"):
            until = self.advance().word.literal() == "until"
            cond = self.cmd_list(("do",))
            self.expect_word("do")
            body = self.cmd_list(("done",))
            self.expect_word("done")
            node = While(cond, body, until)
        elif self.is_word("{"):
            self.advance()
            body = self.cmd_list(("}",))
            self.expect_word("}")
            node = Group(body)
        elif self.is_op("("):
            self.advance()
            body = self.cmd_list(())
            if not self.is_op(")"):
                raise self.unexpected()
            self.advance()
            node = Group(body, forked=True)
        else:
            return self.simple()
        while self.tok.kind == "IONUM" or (self.tok.kind == "OP" and self.tok.value in REDIR_OPS):
            node.redirs.append(self.redirect())
        return node

    def for_loop(self) -> For:
        self.advance()
        if self.tok.kind != "WORD" or not NAME_RE.match(self.tok.word.literal() or ""):
            raise self.unexpected()
        var = self.advance().word.literal()
        words = None
        self.skip_newlines()
        if self.is_word("in"):
            self.advance()
            words = []
            while self.tok.kind == "WORD":
                words.append(self.advance().word)
        if self.is_op(";"):
            self.advance()
        self.skip_newlines()
        self.expect_word("do")
        body = self.cmd_list(("done",))
        self.expect_word("done")
        return For(var, words, body)

    def if_clause(self) -> If:
        self.advance()
        clauses = []
        orelse = None
        while True:
            cond = self.cmd_list(("then",))
            self.expect_word("then")
            body = self.cmd_list(("elif", "else", "fi"))
            clauses.append((cond, body))
            if self.is_word("elif"):
                self.advance()
                continue
            if self.is_word("else"):
                self.advance()
                orelse = self.cmd_list(("fi",))
            self.expect_word("fi")
            return If(clauses, orelse)

    def simple(self) -> Simple:
        node = Simple()
        while True:
            if self.tok.kind == "IONUM" or (self.tok.kind == "OP" and self.tok.value in REDIR_OPS):
                node.redirs.append(self.redirect())
            elif self.tok.kind == "WORD":
                word = self.advance().word
                assign = None if node.words else _assignment(word)
                if assign:
                    node.assigns.append(assign)
                else:
                    node.words.append(word)
            else:
                break
        if not (node.words or node.assigns or node.redirs):
            raise self.unexpected()
        return node

    def redirect(self) -> Redir:
        fd = None
        if self.tok.kind == "IONUM":
            fd = int(self.advance().value)
        op = self.advance().value
        if op == ">|":
            op = ">"
        if self.tok.kind != "WORD":
            raise self.unexpected()
        word = self.tok.word
        if op in ("<<", "<<-"):
            # register the body before the lexer reads past the end of this line
            doc = Heredoc(word.text(), expand=not word.quoted, strip_tabs=op == "<<-")
            self.lx.pending.append(doc)
            self.advance()
            return Redir(0 if fd is None else fd, "<<", heredoc=doc)
        self.advance()
        default = 0 if op in ("<", "<&") else 1
        return Redir(default if fd is None else fd, op, target=word)


def _assignment(word: Word) -> tuple[str, Word] | None:
    if not word.parts:
        return None
    kind, value, quoted = word.parts[0]
    if kind != "lit" or quoted or "=" not in value:
        return None
    name, _, rest = value.partition("=")
    if not NAME_RE.match(name):
        return None
    parts = ([("lit", rest, False)] if rest else []) + word.parts[1:]
    return name, Word(parts)
