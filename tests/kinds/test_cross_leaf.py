"""`pairs: cross_leaf:` (engine/kinds/leaves.py) through the real engine, with the
transport double of test_engine_kinds.py counting the tests that run between
leaves at each moment: at most `cross_leaf` go up out of one leaf and come down
into one; tests inside one leaf are bounded by `concurrency` only; without
`rail_leaves` each rail stands for its leaf; a NIC of no known leaf counts as
crossing."""

from __future__ import annotations

import asyncio
import shlex
from collections import Counter

import pytest

from runbook.definition.loader import load_runbook
from runbook.definition.model import Status
from runbook.engine.kinds.leaves import UNKNOWN, LeafLoad, leaf_finder
from runbook.engine.kinds.plans import PairTest, _key
from runbook.inventory.load import load_inventory
from tests.kinds.test_engine_kinds import STEPS as ENGINE_KINDS_STEPS
from tests.kinds.test_engine_kinds import PairFabric, drive, job_of

# test_engine_kinds.py's pair step (its job step is not run here), with room for cross_leaf
STEPS = ENGINE_KINDS_STEPS.replace("concurrency: 3", "concurrency: 12{cross_leaf}")
assert STEPS != ENGINE_KINDS_STEPS

INVENTORY = """\
all:
  children:
    compute:
      vars:
{leaves}        compute_nics:
          - {{dev: mA, rail: 1}}
          - {{dev: mB, rail: 2}}
      hosts:
        n[01:16]:
"""

LEAVES = "        rail_leaves: {1: leafA, 2: leafB}\n"
HOSTS = [f"n{i:02d}" for i in range(1, 17)]


class CountingFabric(PairFabric):
    """PairFabric that also counts, per leaf, the tests going up out of it and
    coming down into it at each moment (client -> server), and their peaks."""

    def __init__(self, leaf_of_dev: dict[str, str]):
        super().__init__()
        self.leaf_of_dev = leaf_of_dev
        self.up: Counter[str] = Counter()
        self.down: Counter[str] = Counter()
        self.peak_up: Counter[str] = Counter()
        self.peak_down: Counter[str] = Counter()
        self.inside_peak = 0
        self.inside = 0

    async def run(self, host, command, *, timeout, on_line=None, retries=0):
        words = shlex.split(job_of(command))
        if words[0] != "cli":
            return await super().run(host, command, timeout=timeout, on_line=on_line, retries=retries)
        up, down = self.leaf_of_dev[words[1]], self.leaf_of_dev[words[3]]
        if up == down:
            self.inside += 1
            self.inside_peak = max(self.inside_peak, self.inside)
        else:
            self.up[up] += 1
            self.down[down] += 1
            self.peak_up[up] = max(self.peak_up[up], self.up[up])
            self.peak_down[down] = max(self.peak_down[down], self.down[down])
        try:
            await asyncio.sleep(0.02)  # every test started in one round overlaps the others
            return await super().run(host, command, timeout=timeout, on_line=on_line, retries=retries)
        finally:
            if up == down:
                self.inside -= 1
            else:
                self.up[up] -= 1
                self.down[down] -= 1


def _world(tmp_path, plan: str, cross_leaf: int | None, leaves: str = LEAVES):
    (tmp_path / "steps").mkdir(exist_ok=True)
    extra = f"\n      cross_leaf: {cross_leaf}" if cross_leaf is not None else ""
    (tmp_path / "steps" / "10-p.yaml").write_text(STEPS.format(plan=plan, cross_leaf=extra))
    (tmp_path / "inv.yaml").write_text(INVENTORY.format(leaves=leaves))
    return load_runbook(tmp_path / "steps"), load_inventory(tmp_path / "inv.yaml")


async def _run(tmp_path, plan, cross_leaf, leaves=LEAVES):
    rb, inv = _world(tmp_path, plan, cross_leaf, leaves)
    fabric = CountingFabric({"mA": "A", "mB": "B"})
    state, _ = await drive(rb, inv, fabric, "pair-bw")
    assert {h: state.status("pair-bw", h) for h in HOSTS} == {h: Status.PASS for h in HOSTS}
    assert not fabric.violations
    return fabric


async def test_cross_leaf_bounds_the_tests_out_of_and_into_each_leaf(tmp_path):
    fabric = await _run(tmp_path, "cross_rail", 2)
    # 16 tests, all between the two leaves (rail 1's NIC -> rail 2's, and back)
    assert max(fabric.peak_up.values()) == 2 and max(fabric.peak_down.values()) == 2
    assert set(fabric.peak_up) == {"A", "B"}


async def test_without_cross_leaf_only_concurrency_bounds_them(tmp_path):
    fabric = await _run(tmp_path, "cross_rail", None)
    assert max(fabric.peak_up.values()) > 2  # what the test above rules out does happen


async def test_tests_inside_one_leaf_are_not_held_back(tmp_path):
    fabric = await _run(tmp_path, "rail", 1)
    assert not fabric.peak_up  # same-rail pairs never leave their leaf
    assert fabric.inside_peak == 12  # 16 tests, 12 at once: `concurrency`, not cross_leaf


async def test_without_rail_leaves_each_rail_stands_for_its_leaf(tmp_path):
    fabric = await _run(tmp_path, "cross_rail", 2, leaves="")
    assert max(fabric.peak_up.values()) == 2


def test_a_leaf_is_the_designs_leaf_of_the_rail_else_the_rail_else_unknown():
    design = {"rail_leaves": {1: "leaf01", "2": "leaf02"}}
    leaf = leaf_finder(lambda _h: design)
    assert leaf("n1", {"rail": 1}) == "leaf01"
    assert leaf("n1", {"rail": 2}) == "leaf02"  # a string key, as YAML may give it
    assert leaf("n1", {"rail": 3}) == "rail 3"  # not in the design: the rail stands for it
    assert leaf("n1", {}) == UNKNOWN
    assert leaf_finder(lambda _h: {})("n1", {"rail": 1}) == "rail 1"


@pytest.mark.parametrize(
    ("a", "b", "crossing"),
    [({"rail": 1}, {"rail": 1}, False), ({"rail": 1}, {"rail": 2}, True), ({}, {}, True)],
)
def test_a_nic_of_no_known_leaf_counts_as_crossing(a, b, crossing):
    load = LeafLoad(1, leaf_finder(lambda _h: {}))
    t = PairTest("n1", "n2", _key(a), _key(b))
    assert (load.path(t) is not None) == crossing
    load.take(t)
    assert load.fits(PairTest("n3", "n4", _key(a), _key(b))) == (not crossing)
    load.give_back(t)
    assert load.fits(PairTest("n3", "n4", _key(a), _key(b)))


def test_the_plan_says_how_many_tests_run_at_once_and_across_leaves(tmp_path):
    from runbook.definition.plan import step_plan

    rb, inv = _world(tmp_path, "cross_rail", 2)
    assert (
        "at most 12 tests at once (2 out of and into each leaf);"
        in step_plan(rb.step("pair-bw"), inv)["kind"]
    )
    rb, inv = _world(tmp_path, "cross_rail", None)
    assert "at most 12 tests at once;" in step_plan(rb.step("pair-bw"), inv)["kind"]
