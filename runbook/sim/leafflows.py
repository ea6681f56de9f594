"""The ib_write_bw flows between leaves running now, in Gb/s asked: up out of
each leaf, down into each (pathmodel.py decides what a flow gets)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable


class LeafFlows:
    def __init__(self) -> None:
        self.up: Counter[str] = Counter()
        self.down: Counter[str] = Counter()

    def start(self, leaf_a: str, leaf_b: str, gbits: float, capacity: Callable[[str], float]) -> float:
        """A flow of `gbits` from leaf_a to leaf_b starts; the Gb/s it gets: its share
        of the uplinks out of leaf_a and into leaf_b (`capacity(leaf)`, Gb/s each way)
        when the flows running ask more of them than they carry."""
        if leaf_a == leaf_b or gbits <= 0:
            return gbits
        self.up[leaf_a] += gbits
        self.down[leaf_b] += gbits
        share = min(1.0, capacity(leaf_a) / self.up[leaf_a], capacity(leaf_b) / self.down[leaf_b])
        return gbits * share

    def end(self, leaf_a: str, leaf_b: str, gbits: float) -> None:
        if leaf_a == leaf_b or gbits <= 0:
            return
        self.up[leaf_a] -= gbits
        self.down[leaf_b] -= gbits
