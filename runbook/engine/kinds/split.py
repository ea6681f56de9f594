"""Name the slow hosts of a job that is below its threshold, by splitting.

Round 1 runs every host. A failing group is halved and both halves run in the
next round (every group of a round at once: they share no host); a passing
group clears its hosts. A single host left runs with a host already cleared,
so a failing pair names it. With one slow host among N this ends after at most
⌈log2 N⌉ + 2 rounds (N, N/2, …, 1, then the pair with a cleared host),
given N ≥ 4 (with 2 or 3 hosts there may be no cleared host to run with:
those left are unknown, none is blamed);
`max_rounds` bounds it whatever happens: what is not settled by then is
unknown."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ...definition.model import Status

Probe = Callable[[list[str]], Awaitable[tuple[Status, Any]]]


@dataclass
class Split:
    fine: dict[str, Any] = field(default_factory=dict)  # host -> evidence of the job that cleared it
    slow: dict[str, Any] = field(default_factory=dict)  # host -> evidence of the job that named it
    unknown: dict[str, Any] = field(default_factory=dict)
    rounds: int = 0
    jobs: list[tuple[int, tuple[str, ...], str]] = field(default_factory=list)  # (round, hosts, status)
    whole: tuple[Status, Any] | None = None  # the first job over every host


def bound(n: int) -> int:
    return math.ceil(math.log2(max(n, 2))) + 2


async def isolate(
    hosts: list[str],
    probe: Probe,
    *,
    split: bool = True,
    max_parallel: int = 8,
    max_rounds: int | None = None,
    cleared: list[str] | None = None,
) -> Split:
    """`cleared`: hosts known good before (passed earlier): partners for single hosts."""
    out = Split()
    limit = max_rounds or bound(len(hosts))
    gate = asyncio.Semaphore(max_parallel)

    async def run(members: list[str]) -> tuple[Status, Any]:
        async with gate:
            return await probe(members)

    groups = [list(hosts)]
    while groups and out.rounds < limit:
        out.rounds += 1
        jobs: list[tuple[list[str], list[str]]] = []
        waiting: list[list[str]] = []
        partners = list(out.fine) + [h for h in cleared or [] if h not in out.fine and h not in hosts]
        for g in groups:
            if len(g) == 1 and out.rounds > 1:
                if not partners:
                    waiting.append(g)  # no cleared host yet to run with
                    continue
                jobs.append((g, g + [partners.pop(0)]))
            else:
                jobs.append((g, g))
        results = await asyncio.gather(*(run(members) for _g, members in jobs))
        groups = []
        for (g, members), (status, evidence) in zip(jobs, results):
            out.jobs.append((out.rounds, tuple(members), status.value))
            if out.whole is None:
                out.whole = (status, evidence)
            if status == Status.PASS:
                out.fine.update({h: evidence for h in g})
            elif status == Status.FAIL and (len(g) == 1 and len(members) > 1 or not split):
                out.slow.update({h: evidence for h in g})
            elif status == Status.FAIL and len(g) > 1:
                half = (len(g) + 1) // 2
                groups += [g[:half], g[half:]]
            else:  # could not be assessed (or one host alone, failing)
                out.unknown.update({h: evidence for h in g})
        groups += waiting
    for g in groups:
        for h in g:
            out.unknown.setdefault(h, None)
    return out
