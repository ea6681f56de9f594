"""The simulator's process settles the garbage collector once its lab is up
(sim/collector.py): start-up objects frozen, a larger young generation."""

from __future__ import annotations

import gc

from runbook.sim import collector


def test_settle_freezes_the_start_up_and_raises_the_thresholds():
    before = gc.get_threshold()
    try:
        collector.settle_after_start()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == collector.THRESHOLDS
        assert collector.THRESHOLDS[0] > before[0]
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
