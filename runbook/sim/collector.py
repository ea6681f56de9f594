"""The garbage collector's settings in the simulator's own process (`runbook
sim`, sim/main.py), once the lab is up.

With the default thresholds (700, 10, 10) an object is promoted to the oldest
generation once it has lived through ~7,000 allocations: a few commands' worth
when hundreds of sessions run at once, so nearly every in-flight command's
objects (coroutines, parsed words, SSH channel state) reached it, and full
collections, each visiting the whole lab (every node's state), came every few
seconds: ~15% of the sim's CPU under the whole runbook at 384 nodes. A larger
young generation lets a command's objects die young; what the start-up built
(the nodes' state, the listeners) is moved out of the collector's sight with
gc.freeze: it lives as long as the lab.
"""

from __future__ import annotations

import gc

THRESHOLDS = (50_000, 20, 10)  # young, middle, old (the old one counts middle collections)


def settle_after_start() -> None:
    """Collect what the start-up left, freeze the rest, raise the thresholds."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
