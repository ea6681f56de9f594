"""Load, not faults: the simulator drops connections mid-command and stalls
handshakes (sim/loadfaults.py); a read-only verify is tried again (bounded,
with backoff, the attempts journaled) and reaches the host's real verdict,
while a host that keeps failing is still `unknown` after the last try."""

from __future__ import annotations

from runbook.definition.loader import load_runbook
from runbook.definition.model import Host, Status
from runbook.engine.runner import VERIFY_RETRIES, Engine
from runbook.inventory.load import load_inventory
from runbook.run.events import HostFinished
from runbook.run.state import RunState
from runbook.transport.hostkeys import HostKeyPolicy
from runbook.transport.session import LOST_MID_COMMAND
from runbook.transport.transport import Transport

# A verdict that differs by host (gpu01 passes, the others fail), so a retried
# command is seen to reach each host's own verdict, not just "some answer".
STEPS = """\
phase: p
title: P
steps:
  - id: kernel
    title: kernel
    why: w
    hosts: compute
    verify:
      run: hostname
      timeout: 10
      expect:
        - {contains: "gpu01"}
"""


def transport_for(lab, hosts, connect_timeout=5.0) -> Transport:
    return Transport(
        hosts, policy=HostKeyPolicy([lab.known_hosts]), ssh_config=[], connect_timeout=connect_timeout
    )


async def verify(lab, tmp_path, connect_timeout=5.0):
    (tmp_path / "steps").mkdir(exist_ok=True)
    (tmp_path / "steps" / "10-p.yaml").write_text(STEPS)
    rb = load_runbook(tmp_path / "steps")
    inv = load_inventory(lab.inventory)
    state = RunState()
    t = transport_for(lab, inv.hosts, connect_timeout)
    events = []
    try:
        engine = Engine(rb, inv, t, state)
        async for batch in engine.run(rb.steps, "verify"):
            events.extend(batch)
    finally:
        await t.close()
    finished = {e.host: e for e in events if isinstance(e, HostFinished)}
    return state, finished


def one_host(lab) -> dict[str, Host]:
    node = lab.node(lab.names()[0])
    return {
        "n1": Host(
            "n1",
            {
                "ansible_host": node.address,
                "ansible_port": node.port,
                "ansible_user": "root",
                "ansible_ssh_private_key_file": str(lab.client_key),
            },
        )
    }


async def test_the_knob_really_drops_a_command_without_retries(make_lab):
    lab = await make_lab(1)
    lab.load_faults.drop_commands = 1
    t = transport_for(lab, one_host(lab))
    try:
        r = await t.run("n1", "uname -r", timeout=10)
        assert r.unknown_reason == LOST_MID_COMMAND and r.attempts == 1
        r = await t.run("n1", "uname -r", timeout=10)  # used up: the next one runs
        assert r.ok and "el9" in r.stdout
    finally:
        await t.close()
    assert lab.load_faults.dropped == 1


async def test_dropped_connections_are_retried_into_the_real_verdicts(make_lab, tmp_path):
    lab = await make_lab(6)
    lab.load_faults.drop_commands = 4  # the first four commands, whichever hosts they are
    state, finished = await verify(lab, tmp_path)
    assert lab.load_faults.dropped == 4
    assert state.status("kernel", "gpu01") == Status.PASS, state.reason("kernel", "gpu01")
    for h in ("gpu02", "gpu03", "gpu04", "gpu05", "gpu06"):
        assert state.status("kernel", h) == Status.FAIL, state.reason("kernel", h)
    retried = [e for e in finished.values() if e.attempt > 1]
    assert len(retried) >= 1  # journaled: the attempt count, and what each earlier one met
    assert all("tried again after attempt 1: connection lost mid-command" in e.stderr for e in retried)
    assert not any(s == Status.UNKNOWN.value for s in (e.status for e in finished.values()))


async def test_stalled_handshakes_are_retried(make_lab, tmp_path):
    lab = await make_lab(4)
    lab.load_faults.stall_handshakes = 2
    state, finished = await verify(lab, tmp_path, connect_timeout=1.0)
    assert lab.load_faults.stalled == 2
    assert state.status("kernel", "gpu01") == Status.PASS
    assert all(state.status("kernel", h) == Status.FAIL for h in finished if h != "gpu01")
    retried = [e for e in finished.values() if e.attempt > 1]
    assert len(retried) == 2
    assert all("connect timeout after 1s" in e.stderr for e in retried)


async def test_a_host_that_keeps_dropping_is_unknown_after_the_bounded_retries(make_lab, tmp_path):
    lab = await make_lab(1)
    lab.load_faults.drop_commands = 1000  # every command, every time
    state, finished = await verify(lab, tmp_path)
    (host,) = finished
    assert state.status("kernel", host) == Status.UNKNOWN
    assert finished[host].attempt == 1 + VERIFY_RETRIES
    assert lab.load_faults.dropped == 1 + VERIFY_RETRIES
    assert state.reason("kernel", host).startswith(LOST_MID_COMMAND)
    assert f"attempt {VERIFY_RETRIES}: {LOST_MID_COMMAND}" in state.reason("kernel", host)


async def test_apply_is_never_retried(make_lab):
    lab = await make_lab(1)
    lab.load_faults.drop_commands = 1
    t = transport_for(lab, one_host(lab))
    try:
        r = await t.run("n1", "touch /tmp/x", timeout=10)  # retries=0: what apply and rollback use
        assert r.unknown_reason == LOST_MID_COMMAND and r.attempts == 1
    finally:
        await t.close()
