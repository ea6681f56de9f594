"""While the screen is up, what it holds is out of the cyclic collector's walks
(runbook/tui/heap.py): frozen once mounted and after each run, full collections
held back; all of it undone when the screen goes."""

import gc
import weakref

from runbook.tui import heap
from runbook.tui.app import make_app


class Node:
    def __init__(self):
        self.other = None


def test_settle_collects_the_garbage_of_now_and_freezes_the_rest():
    gc.unfreeze()
    alive = Node()
    cycle_a, cycle_b = Node(), Node()
    cycle_a.other, cycle_b.other = cycle_b, cycle_a  # garbage only the cyclic collector frees
    gone = weakref.ref(cycle_a)
    del cycle_a, cycle_b
    try:
        heap.settle()
        assert gone() is None  # collected, not frozen with the rest
        assert gc.get_freeze_count() > 0
        assert alive.other is None
    finally:
        heap.release()
    assert gc.get_freeze_count() == 0


def test_an_old_cycle_frozen_at_a_settle_is_freed_after_release():
    """The settle's price (heap.py): garbage that reached the old generation stays
    until the screen goes; then the collector frees it like any other."""
    gc.unfreeze()
    a, b = Node(), Node()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    gc.collect(1)
    gc.collect(1)  # survived two collections: in the old generation now
    del a, b
    try:
        heap.settle()
        assert gone() is not None  # young collections do not walk it; frozen
    finally:
        heap.release()
    gc.collect()
    assert gone() is None


async def test_the_screen_freezes_its_heap_and_gives_it_back_on_exit(fixed_session):
    gc.unfreeze()
    threshold = gc.get_threshold()
    app = make_app(fixed_session, blink=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert gc.get_freeze_count() > 0  # the session, the views, the widgets
        assert gc.get_threshold()[2] >= heap.FULL_EVERY  # full collections held back
    assert gc.get_freeze_count() == 0  # nothing frozen outlives the app
    assert gc.get_threshold() == threshold
