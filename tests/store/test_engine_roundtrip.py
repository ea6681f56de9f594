"""The engine's real event stream goes into the store batch by batch (as the
session does); reopening the run gives back exactly the state the engine had."""

from __future__ import annotations

from runbook.definition.loader import load_runbook
from runbook.definition.targets import ordered
from runbook.engine.runner import Engine
from runbook.inventory.load import load_inventory
from runbook.run.state import RunState
from runbook.store import Store
from tests.engine.fakes import FakeHost, FakeTransport
from tests.engine.test_runner import STEPS  # the same two-step runbook as the engine's tests

from .helpers import new_store

INVENTORY = "all:\n  children:\n    compute:\n      hosts:\n        n[1:6]:\n"


async def test_reopened_run_has_the_engines_state(tmp_path):
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "10-p.yaml").write_text(STEPS)
    (tmp_path / "inv.yaml").write_text(INVENTORY)
    rb, inv = load_runbook(tmp_path / "steps"), load_inventory(tmp_path / "inv.yaml")
    hosts = {h: FakeHost() for h in inv.hosts}
    hosts["n2"].link = "ETH(2)"
    hosts["n3"].version = "5.8"
    hosts["n5"].reachable = False
    state = RunState()
    engine = Engine(rb, inv, FakeTransport(hosts), state)

    async def yes(*_):
        return True

    store = new_store(tmp_path / "state", inventory_sha256=inv.sha256, runbook_sha256=rb.sha256)
    for action, steps in (("verify", ordered(rb)), ("apply", [rb.step("link")]), ("verify", ordered(rb))):
        async for batch in engine.run(steps, action, confirm=yes):
            store.append_many(batch)  # HostOutput and all: the store drops what is live-only
    store.close()

    with Store.open(tmp_path / "state") as again:
        assert again.came_back == {}
        seen = {again.host_status(s.id, h).value for s in rb.steps for h in inv.hosts}
        assert seen == {"pass", "fail", "unknown", "blocked"}  # a varied picture to compare
        for step in rb.steps:
            for h in inv.hosts:
                assert again.host_status(step.id, h) == state.status(step.id, h), (step.id, h)
                assert again.state.reason(step.id, h) == state.reason(step.id, h)
        assert again.before("link", "n2") == state.before("link", "n2") is not None
        assert again.pending_actions() == []  # the reboot was owed, then done
        assert again.stale_steps({s.id: s.sha256 for s in rb.steps}, inv.sha256) == {}
        r = again.results()[("link", "n2")]
        assert (r["status"], r["action"], r["stdout"]) == ("pass", "verify", "LINK_TYPE_P1 IB(1)\n")
        assert again.verify_chain() == again.head()
