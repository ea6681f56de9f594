"""The syntax tree of the small shell (a POSIX sh subset)."""

from __future__ import annotations

from dataclasses import dataclass, field

# A word is a list of parts: (kind, value, quoted)
#   ("lit", text, quoted)   literal text; unquoted text may hold glob characters
#   ("var", name, quoted)   $name ${name} $? ... (name may carry ":-default")
#   ("cmd", source, quoted) $(...) or `...`
#   ("arith", expr, quoted) $((...))
#   ("tilde", "", False)    a leading ~
Part = tuple[str, str, bool]


_UNKNOWN = object()


@dataclass
class Word:
    parts: list[Part]
    # How the interpreter expands it, worked out from the parts on first use
    # (sim/shell/interp.py expansion_plan); trees are cached and shared, their
    # parts never change. Not part of the word's value.
    plan: object = field(default=None, compare=False, repr=False)

    _literal = _UNKNOWN  # not a field (no annotation): literal()'s answer once asked

    def literal(self) -> str | None:
        """The text if the word is plain unquoted literal text (reserved words, NAME=).
        Asked many times of each word while parsing (every reserved word is
        tried), answered once: the parts never change."""
        lit = self._literal
        if lit is _UNKNOWN:
            if all(k == "lit" and not q for k, _, q in self.parts):
                lit = "".join(v for _, v, _ in self.parts)
            else:
                lit = None
            self._literal = lit
        return lit

    def text(self) -> str:
        """Literal text ignoring quoting (heredoc delimiters)."""
        return "".join(v for k, v, _ in self.parts if k == "lit")

    @property
    def quoted(self) -> bool:
        return any(q for _, _, q in self.parts)


@dataclass
class Heredoc:
    delimiter: str
    expand: bool
    strip_tabs: bool
    body: str = ""


@dataclass
class Redir:
    fd: int
    op: str  # > >> < << >& <& &>
    target: Word | None = None
    heredoc: Heredoc | None = None


@dataclass
class Simple:
    assigns: list[tuple[str, Word]] = field(default_factory=list)
    words: list[Word] = field(default_factory=list)
    redirs: list[Redir] = field(default_factory=list)


@dataclass
class Pipeline:
    cmds: list
    negate: bool = False


@dataclass
class AndOr:
    first: Pipeline
    rest: list[tuple[str, Pipeline]] = field(default_factory=list)


@dataclass
class CmdList:
    items: list[tuple[AndOr, bool]] = field(default_factory=list)  # (and_or, background)


@dataclass
class For:
    var: str
    words: list[Word] | None
    body: CmdList
    redirs: list[Redir] = field(default_factory=list)


@dataclass
class If:
    clauses: list[tuple[CmdList, CmdList]]
    orelse: CmdList | None = None
    redirs: list[Redir] = field(default_factory=list)


@dataclass
class While:
    cond: CmdList
    body: CmdList
    until: bool = False
    redirs: list[Redir] = field(default_factory=list)


@dataclass
class Group:
    body: CmdList
    forked: bool = False  # ( ) runs in a copy of the shell state, { } in the shell itself
    redirs: list[Redir] = field(default_factory=list)
