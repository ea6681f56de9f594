"""A job's hosts folded without one of them (that host's peers), for every host
of the job: `peers_of(group, host)`.

NodeSet folds by sorting and scanning every name, so folding the group less one
host for each of its N hosts costs O(N^2 log N): 2.7 s for a 1,000-host NCCL
job, one synchronous stretch of the event loop (a TUI frozen that long). A
group of one pattern ("gpu[0001-1000]") is folded once; each host's peers are
that fold with the one range that holds the host cut in two, formatted as
ClusterShell formats a range (its padding kept). Anything else (several
patterns, several dimensions) goes through NodeSet as before.
tests/engine/test_peers.py holds the fast path to NodeSet's own answer.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ClusterShell.NodeSet import NodeSet

# "prefix[ranges]suffix": one pattern, one bracketed dimension
_ONE_PATTERN = re.compile(r"^([^\[\],]*)\[([0-9,\-]+)\]([^\[\],]*)$")


@lru_cache(maxsize=256)
def folded(hosts: tuple[str, ...]) -> str:
    # a step folds the same groups once per host it records (its jobs, each
    # host's group): NodeSet parses every name, so a group is folded once
    return str(NodeSet.fromlist(hosts))


@lru_cache(maxsize=256)
def _nodeset(hosts: tuple[str, ...]) -> NodeSet:
    return NodeSet.fromlist(hosts)


@lru_cache(maxsize=64)
def _ranges(hosts: tuple[str, ...]) -> tuple[str, str, list[tuple[str, str, int]]] | None:
    """(prefix, suffix, [(first, last, padding)]) of a one-pattern group's fold."""
    m = _ONE_PATTERN.match(folded(hosts))
    if m is None:
        return None
    pieces = []
    for piece in m.group(2).split(","):
        if "/" in piece:  # a stepped range: not produced with autostep off, never guessed at
            return None
        first, _, last = piece.partition("-")
        last = last or first
        padded = len(first) > 1 and first[0] == "0"
        pieces.append((first, last, len(first) if padded else 0))
    return m.group(1), m.group(3), pieces


def _span(lo: int, hi: int, pad: int) -> str:
    return f"{lo:0{pad}d}" if lo == hi else f"{lo:0{pad}d}-{hi:0{pad}d}"


def peers_of(group, host: str) -> str:
    """`group` folded without `host` (the group folded whole if it lacks it)."""
    hosts = tuple(group)
    if host not in hosts:
        return folded(hosts) if hosts else ""
    shape = _ranges(hosts)
    if shape is not None:
        prefix, suffix, pieces = shape
        index = host[len(prefix) : len(host) - len(suffix)] if suffix else host[len(prefix) :]
        if host.startswith(prefix) and host.endswith(suffix) and index.isascii() and index.isdigit():
            n = int(index)
            out: list[str] = []
            count = 0
            hit = False
            for first, last, pad in pieces:
                lo, hi = int(first), int(last)
                if not hit and lo <= n <= hi and f"{n:0{pad}d}" == index:
                    hit = True
                    parts = [(lo, n - 1), (n + 1, hi)]
                else:
                    parts = [(lo, hi)]
                for a, b in parts:
                    if a <= b:
                        out.append(_span(a, b, pad))
                        count += b - a + 1
            if hit:
                if count == 0:
                    return ""
                inner = ",".join(out)
                return f"{prefix}{inner if count == 1 else f'[{inner}]'}{suffix}"
    peers = _nodeset(hosts).copy()
    peers.difference_update(NodeSet.fromlist([host]))
    return str(peers)
