"""Keeping Python's cyclic garbage collector from stalling the UI.

With 1,000 hosts the process holds a large heap (connections, the run state,
every result), and each full collection of the cyclic collector walks all of
it while the event loop waits: 250-450 ms pauses, several per verify of 1,000
hosts (bench/tui_latency.py, bench/results/tui_latency.md). Objects that are
alive once the screen is up and after each run are moved out of the
collector's reach (`gc.freeze`), so later collections only walk what was made
since; reference counting still frees them as usual. While the screen is up,
full collections wait for many more young ones (threshold 2: 10 -> 1000, so
about one per 7 million allocations instead of 70,000).

Each settle (once per run) collects the young generations only, then freezes:
a full collection there walked everything a 1,000-host run had made and held
the loop 250-310 ms at the end of the run; the young ones take a few ms
(bench/README.md, issue 18 table). The price: a reference cycle that became
garbage after reaching the old generation is frozen with the living until
`release` (the app's exit) gives it back to the collector; the memory bench
(`--memory-steps 60`) showed the same growth per 1,000 results either way
(2.4-2.9 MB). `release` puts the frozen objects and the thresholds back when
the screen goes, so nothing outlives the app.
"""

from __future__ import annotations

import gc

_saved: list[tuple[int, int, int]] = []
FULL_EVERY = 1000  # young (generation 1) collections per full one while the screen is up


def hold() -> None:
    """The screen is up: full collections only at a settle (or very rarely)."""
    threshold = gc.get_threshold()
    _saved.append(threshold)
    gc.set_threshold(threshold[0], threshold[1], max(threshold[2], FULL_EVERY))
    settle()


def settle() -> None:
    """Collect the young garbage of now (generations 0 and 1: what was made
    recently), then freeze what is left."""
    gc.collect(1)
    gc.freeze()


def release() -> None:
    gc.unfreeze()
    if _saved:
        gc.set_threshold(*_saved.pop())
