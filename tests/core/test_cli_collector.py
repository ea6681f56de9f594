"""`runbook run` holds the cyclic collector back while the work runs and puts
it back afterwards (cli/collector.py)."""

from __future__ import annotations

import gc

import pytest

from runbook.cli.collector import FULL_EVERY, YOUNG_EVERY, fewer_collections


def test_thresholds_and_frozen_objects_are_put_back():
    before = gc.get_threshold()
    frozen = gc.get_freeze_count()
    with fewer_collections():
        young, middle, full = gc.get_threshold()
        assert young >= YOUNG_EVERY and middle == before[1] and full >= FULL_EVERY
        assert gc.get_freeze_count() > frozen  # what existed is out of the collector's reach
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_put_back_when_the_run_fails():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("the run failed")
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_cycles_made_during_the_run_are_still_collected():
    with fewer_collections():
        a: list = []
        a.append(a)
        del a
        assert gc.collect() >= 1
