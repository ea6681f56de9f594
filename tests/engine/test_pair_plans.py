"""The order of a pair plan (runbook/engine/kinds/plans.py): the scheduler
starts tests in plan order, at most `concurrency` at once, so the first tests
must come from every rail in turn (spread over the rails' leaves), not all from
rail 1; and the plan must still hold each rail's pairs exactly once."""

from __future__ import annotations

from collections import Counter

import pytest

from runbook.engine.kinds.plans import plan

RAILS = 4


def _nics(host: str) -> list[dict]:
    return [{"dev": f"mlx5_{r - 1}", "rail": r} for r in range(1, RAILS + 1)]


HOSTS = [f"gpu{i:02d}" for i in range(1, 12)]  # odd: the last one tests against the first


def _rail(t) -> int:
    return dict(t.client_nic)["rail"]


@pytest.mark.parametrize("kind", ["rail", "ring", "cross_rail"])
def test_the_first_tests_take_the_rails_in_turn(kind):
    tests = plan(kind, HOSTS, _nics)
    assert [_rail(t) for t in tests[: 2 * RAILS]] == list(range(1, RAILS + 1)) * 2
    # so any `concurrency` window holds at most ceil(window / rails) tests of one rail
    for window in (4, 8, 16):
        per_rail = Counter(_rail(t) for t in tests[:window])
        assert max(per_rail.values()) <= -(-window // RAILS)


@pytest.mark.parametrize("kind", ["rail", "ring", "cross_rail"])
def test_each_rails_pairs_are_all_there_once_in_their_own_order(kind):
    tests = plan(kind, HOSTS, _nics)
    assert len(tests) == len(set(tests))
    for rail in range(1, RAILS + 1):
        mine = [(t.client, t.server) for t in tests if _rail(t) == rail]
        if kind == "ring":
            expected = [(HOSTS[i], HOSTS[(i + 1) % len(HOSTS)]) for i in range(len(HOSTS))]
        else:
            expected = [(HOSTS[i], HOSTS[i + 1]) for i in range(0, len(HOSTS) - 1, 2)]
            expected.append((HOSTS[-1], HOSTS[0]))
        assert mine == expected
        if kind == "cross_rail":  # rail i's client NIC writes to the partner's rail i+1 NIC
            assert {dict(t.server_nic)["rail"] for t in tests if _rail(t) == rail} == {rail % RAILS + 1}


def test_rails_of_unequal_size_are_all_taken():
    def nics(host: str) -> list[dict]:
        extra = [{"dev": "mlx5_1", "rail": 2}] if host in HOSTS[:4] else []
        return [{"dev": "mlx5_0", "rail": 1}, *extra]

    tests = plan("rail", HOSTS, nics)
    assert [_rail(t) for t in tests] == [1, 2, 1, 2, 1, 1, 1, 1]
