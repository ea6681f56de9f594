"""format_cpulist answers from its cache what it computes (sim/cpus.py)."""

from __future__ import annotations

import random

from runbook.sim.cpus import _format_cpulist, format_cpulist


def test_cached_cpulists_are_the_computed_ones():
    rng = random.Random(4)
    for _ in range(500):
        cpus = [rng.randrange(128) for _ in range(rng.randrange(0, 70))]
        for form in (cpus, set(cpus), sorted(cpus)):
            assert format_cpulist(form) == _format_cpulist.__wrapped__(tuple(form))
            assert format_cpulist(form) == format_cpulist(list(form))  # again, from the cache
    assert format_cpulist([3, 0, 1, 2, 8, 8]) == "0-3,8"
