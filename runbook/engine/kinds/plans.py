"""Pair plans (docs/step-kinds.md): which node tests against which, on which
NIC. Rails come from the inventory's `compute_nics` ({dev, rail, ...}); a host
without them has one unnamed port ({})."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Nics = Callable[[str], list[dict[str, Any]]]


@dataclass(frozen=True)
class PairTest:
    client: str
    server: str
    client_nic: tuple = ()  # sorted items of the compute_nics entry (hashable)
    server_nic: tuple = ()

    @property
    def cnic(self) -> dict[str, Any]:
        return _unkey(self.client_nic)

    @property
    def snic(self) -> dict[str, Any]:
        return _unkey(self.server_nic)

    def __post_init__(self) -> None:
        # schedule() asks every pending test for its ends each time a test ends
        # (2,000 tests on 1,000 nodes): computed once, not from two new dicts each time
        ends = (self.client, str(self.cnic.get("dev", ""))), (self.server, str(self.snic.get("dev", "")))
        object.__setattr__(self, "_ends", ends)

    def ends(self) -> tuple[tuple[str, str], tuple[str, str]]:
        """(host, device) of both sides: a NIC (and the GPU next to it) is in one test at a time."""
        return self._ends

    @property
    def label(self) -> str:
        (a, da), (b, db) = self.ends()
        return f"{a}{' ' + da if da else ''} ↔ {b}{' ' + db if db else ''}"


def end_label(host: str, nic: dict[str, Any]) -> str:
    rail = f" (rail {nic['rail']})" if "rail" in nic else ""
    return f"{host} {nic.get('dev', '')}".strip() + rail


def _key(nic: dict[str, Any]) -> tuple:
    """A NIC entry made hashable (lists become tuples; _unkey turns them back)."""
    return tuple(
        sorted(
            (k, tuple(v) if isinstance(v, list) else v)
            for k, v in nic.items()
            if isinstance(v, (str, int, float, list))
        )
    )


def _unkey(key: tuple) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in key}


def rails_of(hosts: list[str], nics: Nics) -> dict[int, dict[str, dict]]:
    """rail -> {host: its NIC on that rail}, hosts in order."""
    out: dict[int, dict[str, dict]] = {}
    for h in hosts:
        for nic in nics(h):
            if "rail" in nic:
                out.setdefault(int(nic["rail"]), {})[h] = nic
    return dict(sorted(out.items()))


def _pairs_in_order(members: list[str]) -> list[tuple[str, str]]:
    """(0,1), (2,3), …; an odd last one tests against the first."""
    pairs = [(members[i], members[i + 1]) for i in range(0, len(members) - 1, 2)]
    if len(members) % 2 and len(members) > 1:
        pairs.append((members[-1], members[0]))
    return pairs


def plan(
    kind: str, hosts: list[str], nics: Nics, explicit: tuple[tuple[str, str], ...] = ()
) -> list[PairTest]:
    if kind == "list":
        first = lambda h: _key(nics(h)[0]) if nics(h) else ()
        return [PairTest(a, b, first(a), first(b)) for a, b in explicit]
    rails = rails_of(hosts, nics)
    by_rail: list[list[PairTest]] = []
    numbers = list(rails)
    for idx, rail in enumerate(numbers):
        members = list(rails[rail])
        tests: list[PairTest] = []
        by_rail.append(tests)
        if kind == "rail":
            tests += [
                PairTest(a, b, _key(rails[rail][a]), _key(rails[rail][b]))
                for a, b in _pairs_in_order(members)
            ]
        elif kind == "ring":
            if len(members) > 1:
                tests += [
                    PairTest(
                        members[i],
                        members[(i + 1) % len(members)],
                        _key(rails[rail][members[i]]),
                        _key(rails[rail][members[(i + 1) % len(members)]]),
                    )
                    for i in range(len(members) if len(members) > 2 else 1)
                ]
        elif kind == "cross_rail":
            other = numbers[(idx + 1) % len(numbers)]
            if other == rail:
                continue
            for a, b in _pairs_in_order(members):
                if b in rails[other]:
                    tests.append(PairTest(a, b, _key(rails[rail][a]), _key(rails[other][b])))
        else:
            raise ValueError(f"unknown pair plan {kind!r}")
    return _interleaved(by_rail)


def _interleaved(by_rail: list[list[PairTest]]) -> list[PairTest]:
    """The rails' tests taken in turn (1st of each rail, then 2nd, ...): the scheduler
    starts tests in this order, so the `concurrency` tests running at once are spread
    over the rails' leaves (and, across rails, over their uplinks) instead of all
    loading the first rail's leaf."""
    out: list[PairTest] = []
    for i in range(max((len(t) for t in by_rail), default=0)):
        out += [t[i] for t in by_rail if i < len(t)]
    return out


def retest(end: tuple[str, dict], test: PairTest, partner: str, partner_nic: dict) -> PairTest:
    """The same end against another partner (the tie-break), on the same side it had."""
    host, nic = end
    if host == test.client:
        return PairTest(host, partner, _key(nic), _key(partner_nic))
    return PairTest(partner, host, _key(partner_nic), _key(nic))
