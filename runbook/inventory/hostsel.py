"""Host selection: which inventory hosts a step's `hosts:` or `--hosts` means,
and the folded form every part of runbook uses to show a set of hosts.

Grammar (ClusterShell NodeSet's operators, applied strictly left to right as
NodeSet applies them; there is no precedence and there are no parentheses):

    expression := operand ( operator operand )*
    operator   := ","   union          a,b   hosts in a or in b
                | "!"   difference     a!b   hosts in a and not in b
                | "&"   intersection   a&b   hosts in both
                | "^"   xor            a^b   hosts in exactly one of them
    operand    := GROUP        a group of the inventory: its hosts and those of
                               its child groups (`all`, `ungrouped` included)
                | @GROUP       the same, saying explicitly that it is a group
                | HOST         one host of the inventory
                | PATTERN      a NodeSet pattern: gpu[01-48], gpu[01-04,07],
                               ib[1-2]-sw[1-4] (ranges use '-', as in NodeSet)

Operator characters inside [...] belong to the pattern; spaces around an
operand are ignored. So `compute!gpu07` is every compute host but gpu07,
`compute!gpu07,sm` is (compute minus gpu07) plus sm, `compute&sm` the hosts in
both groups, `gpu[01-48]!gpu07` 47 hosts.

Nothing unknown is ever dropped silently: an operand that names no group and
no host, or a pattern with hosts the inventory does not have, raises
HostSelectionError that lists every unknown name (folded). A valid expression
may still select nothing (`compute&sm`): that is an empty list, not an error.
The result is in inventory order (the order hosts were first defined).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..definition.model import Inventory
from ..errors import UsageError
from .hostpattern import MAX_RANGE_HOSTS

__all__ = ["HostSelectionError", "select_hosts", "fold", "names_only_empty_groups"]

OPERATORS = ",!&^"
_NOT_FOLDABLE = set(OPERATORS) | set("[]@")


class HostSelectionError(UsageError, ValueError):
    """A host expression that is malformed or names unknown hosts/groups.

    `unknown` lists the unknown names (groups as `@name`)."""

    def __init__(self, message: str, unknown: list[str] | None = None):
        super().__init__(message)
        self.unknown = list(unknown or [])


def select_hosts(inv: Inventory, expr: str) -> list[str]:
    """The hosts an expression selects, in inventory order."""
    operands, operators = _split(expr)
    unknown_groups: list[str] = []
    unknown_words: list[str] = []
    missing_hosts: list[str] = []
    selected: set[str] = set()
    for i, token in enumerate(operands):
        hosts = _operand(inv, expr, token, unknown_groups, unknown_words, missing_hosts)
        op = operators[i - 1] if i else ","
        if op == ",":
            selected |= hosts
        elif op == "!":
            selected -= hosts
        elif op == "&":
            selected &= hosts
        else:
            selected ^= hosts
    if unknown_groups or unknown_words or missing_hosts:
        parts = []
        if unknown_groups:
            parts.append("no such group: " + ", ".join("@" + g for g in unknown_groups))
        if unknown_words:
            hint = (
                " (combine with NodeSet's , ! & ^ — not Ansible's ':' as in compute:!gpu07)"
                if any(":" in w for w in unknown_words)
                else ""
            )
            parts.append("no such group or host: " + ", ".join(unknown_words) + hint)
        if missing_hosts:
            parts.append("no such host: " + fold(missing_hosts))
        raise HostSelectionError(
            f"host selection {expr!r}: " + "; ".join(parts) + f" (groups: {', '.join(inv.groups)})",
            ["@" + g for g in unknown_groups] + unknown_words + missing_hosts,
        )
    return [h for h in inv.hosts if h in selected]


def names_only_empty_groups(inv: Inventory, expr: str) -> bool:
    """True when every operand of `expr` is a group the inventory declares with
    no host at all (`sm:` with `hosts: {}`): the site says it has no such nodes
    (the subnet managers run on a switch, say), so a step for them has no target
    there. An expression that selects nothing from groups that do have hosts
    (`compute&sm` on an ordinary site) is not that."""
    try:
        operands, _ = _split(expr)
    except HostSelectionError:
        return False
    for token in operands:
        name = token[1:] if token.startswith("@") else token
        if name not in inv.groups or inv.group_members(name):
            return False
    return True


def _split(expr: str) -> tuple[list[str], list[str]]:
    """Operands and the operators between them; operators inside [...] are not split on."""
    if not isinstance(expr, str) or not expr.strip():
        raise HostSelectionError(f"empty host selection {expr!r}")
    operands, operators, current, depth = [], [], "", 0
    for ch in expr:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch in OPERATORS and depth == 0:
            operands.append(current.strip())
            operators.append(ch)
            current = ""
        else:
            current += ch
    operands.append(current.strip())
    if depth != 0:
        raise HostSelectionError(f"host selection {expr!r}: unbalanced brackets")
    if "" in operands:
        raise HostSelectionError(
            f"host selection {expr!r}: an operator needs a group, host or pattern on each side"
        )
    return operands, operators


def _nodeset_module():
    """ClusterShell's NodeSet module, imported at its first use: with the logging
    and configparser modules it brings, about 17 M instructions (1 %) of a cold
    `runbook run` that selects no pattern and has no host to fold, every host
    having passed (bench/results/s17-cold-instructions.md)."""
    from ClusterShell import NodeSet

    return NodeSet


def _operand(
    inv: Inventory,
    expr: str,
    token: str,
    unknown_groups: list[str],
    unknown_words: list[str],
    missing_hosts: list[str],
) -> set[str]:
    if token.startswith("@"):
        if token[1:] in inv.groups:
            return set(inv.group_members(token[1:]))
        unknown_groups.append(token[1:])
        return set()
    if token in inv.groups:
        return set(inv.group_members(token))
    if token in inv.hosts:
        return {token}
    if "[" not in token:
        unknown_words.append(token)
        return set()
    ns = _nodeset_module()
    try:
        size = _pattern_size(token)  # before NodeSet, which builds a set of every index
        if size > MAX_RANGE_HOSTS:
            raise HostSelectionError(
                f"host selection {expr!r}: {token!r} stands for {size} "
                f"names, more than the {MAX_RANGE_HOSTS} a pattern may"
            )
        names = list(ns.NodeSet(token, resolver=ns.RESOLVER_NOGROUP))
    except ns.NodeSetException as exc:
        hint = " (NodeSet ranges use '-': gpu[01-48], not gpu[01:48])" if ":" in token else ""
        raise HostSelectionError(f"host selection {expr!r}: bad pattern {token!r}: {exc}{hint}") from None
    missing_hosts.extend(n for n in names if n not in inv.hosts)
    return {n for n in names if n in inv.hosts}


_BRACKET = re.compile(r"\[([^\]]*)\]")
_SPAN = re.compile(r"\s*(\d+)\s*(?:-\s*(\d+)\s*(?:/\s*(\d+)\s*)?)?")


def _pattern_size(token: str) -> int:
    """How many names a NodeSet pattern stands for, counted without expanding it
    (an upper bound; spans NodeSet would refuse count as what they say)."""
    total = 1
    for body in _BRACKET.findall(token):
        count = 0
        for part in body.split(","):
            m = _SPAN.fullmatch(part)
            if not m:
                continue
            lo, hi, step = int(m[1]), int(m[2] or m[1]), int(m[3] or 1)
            count += max(0, (hi - lo) // max(step, 1) + 1)
        total *= max(count, 1)
    return total


def unfold(folded: str) -> frozenset[str]:
    """The names of a folded host string, as NodeSet reads it (an operator
    decision's hosts, recorded folded)."""
    return frozenset(_nodeset_module().NodeSet(folded))


def fold(hosts: Iterable[str]) -> str:
    """Hosts folded into one NodeSet string, e.g. "gpu[07,13,21-22],sm01"."""
    names = list(dict.fromkeys(hosts))
    if not names:
        return ""
    if any(ch in _NOT_FOLDABLE for name in names for ch in name):
        return ",".join(names)  # NodeSet would read these characters as syntax
    ns = _nodeset_module()
    try:
        return str(ns.NodeSet.fromlist(names, resolver=ns.RESOLVER_NOGROUP))
    except ns.NodeSetException:  # pragma: no cover - names NodeSet cannot represent
        return ",".join(names)
