"""Python's cyclic garbage collector during a headless run.

A run allocates objects at a high rate (packets, events, results) while the
heap it keeps grows (the state, the store's index, connections); with the
default thresholds the collector ran ~1,000 times in a 192-host verify of the
whole runbook, full collections walking the whole heap, and took ~2.4 s of
the client's ~9.5 s of CPU (bench/README.md, issue 18 goal 1). While the work
runs, what was alive before it (modules, the project, the connections) is
moved out of the collector's reach (`gc.freeze`), young collections come
every 10,000 allocations instead of 700 (most objects are freed by reference
counting before they are ever walked) and a full collection waits for 100
young-generation-1 ones instead of 10. Reference counting frees as before;
only reference cycles wait longer. Everything is put back afterwards.
`runbook run` as a program holds it back from its start (cli/main.py): its imports,
project load and first handshakes come before the work runs.
(The TUI has its own policy: runbook/tui/heap.py.)
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

YOUNG_EVERY = 10_000  # allocations (net) between young collections
FULL_EVERY = 100  # generation-1 collections per full one


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    saved = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(saved[0], YOUNG_EVERY), saved[1], max(saved[2], FULL_EVERY))
    try:
        yield
    finally:
        gc.set_threshold(*saved)
        gc.unfreeze()
