"""Which leaf a pair test's traffic leaves and enters, and how many tests at once
may cross between leaves (`pairs: cross_leaf:`, docs/step-kinds.md).

A leaf switch is non-blocking: tests between two ports of one leaf do not load
each other, so only "one test per NIC" bounds them. A test between two leaves
goes up the client's leaf's uplinks and down into the server's leaf (ib_write_bw
writes client -> server), and the uplinks are shared, oversubscribed (1.5:1 on
the seed) and routed statically: too many such tests at once read as slow links.
`cross_leaf: N` lets at most N tests at once go up from one leaf, and N come down
into one.

A NIC's leaf is the design's `rail_leaves[rail]` (inventory group vars, as the
rail-cabling step checks it); without it, its rail stands for its leaf (a
rail-optimized fat tree puts each rail on leaves of its own). A NIC with neither
is on an unknown leaf: its tests count as crossing, so they are never run more
than N at once."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from .plans import PairTest

UNKNOWN = "?"

LeafOf = Callable[[str, dict[str, Any]], str]


def leaf_finder(host_vars: Callable[[str], dict[str, Any]]) -> LeafOf:
    """leaf(host, nic) -> the leaf's name, its rail's label, or UNKNOWN."""

    def leaf(host: str, nic: dict[str, Any]) -> str:
        rail = nic.get("rail")
        if rail is None:
            return UNKNOWN
        leaves = host_vars(host).get("rail_leaves")
        if isinstance(leaves, dict):
            for key in (rail, str(rail)):  # YAML gives `1: leaf01` an int key; a string is as good
                if key in leaves:
                    return str(leaves[key])
        return f"rail {rail}"

    return leaf


class LeafLoad:
    """The tests crossing between leaves now: up from each leaf, down into each."""

    def __init__(self, limit: int | None, leaf: LeafOf):
        self.limit = limit
        self.leaf = leaf
        self.up: Counter[str] = Counter()
        self.down: Counter[str] = Counter()
        self._paths: dict[PairTest, tuple[str, str] | None] = {}  # fits() asks again at every test's end

    def path(self, t: PairTest) -> tuple[str, str] | None:
        """(client's leaf, server's leaf) for a test between leaves; None inside one."""
        try:
            return self._paths[t]
        except KeyError:
            pass
        up, down = self.leaf(t.client, t.cnic), self.leaf(t.server, t.snic)
        path = self._paths[t] = None if up == down and up != UNKNOWN else (up, down)
        return path

    def fits(self, t: PairTest) -> bool:
        if self.limit is None:
            return True
        path = self.path(t)
        return path is None or (self.up[path[0]] < self.limit and self.down[path[1]] < self.limit)

    def take(self, t: PairTest) -> None:
        path = self.path(t) if self.limit is not None else None
        if path is not None:
            self.up[path[0]] += 1
            self.down[path[1]] += 1

    def give_back(self, t: PairTest) -> None:
        path = self.path(t) if self.limit is not None else None
        if path is not None:
            self.up[path[0]] -= 1
            self.down[path[1]] -= 1
