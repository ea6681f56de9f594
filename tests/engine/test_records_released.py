"""A verify step's parsed records are let go once the step is judged (runner.py
_step_finished: keeping every one held most of a 1,000-host run's memory); an
apply then takes its `before` from the newest verify, re-parsed through the
engine's record_loader, never from an older one."""

from __future__ import annotations

from runbook.criteria.host import parse_output
from runbook.definition.loader import load_runbook
from runbook.definition.model import Status
from runbook.engine.runner import Engine
from runbook.inventory.load import load_inventory
from runbook.run.events import HostFinished
from runbook.run.state import RunState

from .fakes import FakeHost, FakeTransport

STEPS = """\
phase: p
title: P
steps:
  - id: digest
    title: the file as designed
    why: w
    hosts: all
    verify:
      run: sha256sum /etc/x
      parse: sha256sum
      expect:
        - {path: "files./etc/x", eq: "%s"}
    apply:
      run: restore-x
    rollback:
      run: put-back-x
""" % ("a" * 64)


async def _drive(engine, steps, action, keep):
    """Run, handing each batch to `keep` as it comes (as the session feeds its store)."""

    async def yes(*_args):
        return True

    events = []
    async for batch in engine.run(steps, action, confirm=yes):
        keep(batch)
        events.extend(batch)
    return events


async def test_records_go_after_the_step_and_apply_takes_the_newest(tmp_path) -> None:
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "10-p.yaml").write_text(STEPS)
    (tmp_path / "inv.yaml").write_text("all:\n  hosts:\n    n[1:3]:\n")
    rb, inv = load_runbook(tmp_path / "steps"), load_inventory(tmp_path / "inv.yaml")
    hosts = {h: FakeHost() for h in inv.hosts}
    hosts["n2"].digest = "b" * 64
    state = RunState()
    outputs: dict[tuple[str, str], str] = {}  # what the store would hold: the latest verify output
    loaded: list[tuple[str, str]] = []

    def loader(step_id: str, host: str):
        loaded.append((step_id, host))
        return parse_output("sha256sum", outputs[(step_id, host)])[0]

    engine = Engine(rb, inv, FakeTransport(hosts), state, record_loader=loader)
    step = rb.step("digest")

    def keep(events):
        for e in events:
            if isinstance(e, HostFinished) and e.action == "verify":
                outputs[(e.step_id, e.host)] = e.stdout

    first = await _drive(engine, [step], "apply", keep)  # verify, apply on n2 (the file stays as it is)
    assert [e.before for e in first if isinstance(e, HostFinished) and e.action == "apply"] == [
        {"files": {"/etc/x": "b" * 64}, "count": 1}
    ]
    assert state.status("digest", "n2") == Status.FAIL
    assert not any(k[0] == "digest" for k in state.records)  # let go once judged

    hosts["n2"].digest = "c" * 64  # the file changed again before the fix
    events = await _drive(engine, [step], "apply", keep)  # verifies again, then applies on n2
    applied = [e for e in events if isinstance(e, HostFinished) and e.action == "apply"]
    assert [e.host for e in applied] == ["n2"]
    assert applied[0].before == {"files": {"/etc/x": "c" * 64}, "count": 1}  # the newest verify's
    assert ("digest", "n2") in loaded
