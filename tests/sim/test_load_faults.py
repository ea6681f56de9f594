"""Load, not faults: the simulator drops connections mid-command and stalls
handshakes (sim/loadfaults.py); a read-only verify is tried again (bounded,
with backoff, the attempts journaled) and reaches the host's real verdict,
while a host that keeps failing is still `unknown` after the last try. The
same drops without retries (`verify_retries=0`) do make false unknowns, so
these tests can tell a retry that works from one that never ran."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

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


async def verify(lab, tmp_path, connect_timeout=5.0, rounds=1, **engine_kw):
    (tmp_path / "steps").mkdir(exist_ok=True)
    (tmp_path / "steps" / "10-p.yaml").write_text(STEPS)
    rb = load_runbook(tmp_path / "steps")
    inv = load_inventory(lab.inventory)
    state = RunState()
    t = transport_for(lab, inv.hosts, connect_timeout)
    events = []
    try:
        engine = Engine(rb, inv, t, state, **engine_kw)
        for _ in range(rounds):  # the same transport: what a later step meets
            async for batch in engine.run(rb.steps, "verify", again=True):
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


async def test_drop_every_spreads_the_drops(make_lab):
    lab = await make_lab(1)
    lab.load_faults.drop_commands, lab.load_faults.drop_every = 2, 3
    t = transport_for(lab, one_host(lab))
    try:
        lost = [(await t.run("n1", "true", timeout=10)).unknown_reason == LOST_MID_COMMAND for _ in range(8)]
    finally:
        await t.close()
    assert lost == [False, False, True, False, False, True, False, False]
    assert lab.load_faults.dropped == 2


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


async def test_without_retries_the_same_drops_are_false_unknowns(make_lab, tmp_path):
    lab = await make_lab(6)
    lab.load_faults.drop_commands = 4
    state, finished = await verify(lab, tmp_path, verify_retries=0)
    assert lab.load_faults.dropped == 4
    unknown = [h for h in finished if state.status("kernel", h) == Status.UNKNOWN]
    assert len(unknown) == 4  # healthy hosts, judged unknown by load alone
    assert all(state.reason("kernel", h) == LOST_MID_COMMAND for h in unknown)
    assert all(finished[h].attempt == 1 for h in finished)


async def test_drops_leave_only_the_injected_fault(make_lab, tmp_path):
    # a node that refuses connections (a real fault) among dropped commands: only it is unknown
    lab = await make_lab(6, scenario={"gpu03": ["unreachable"]})
    lab.load_faults.drop_commands = 3
    state, finished = await verify(lab, tmp_path)
    assert lab.load_faults.dropped == 3
    unknown = {h for h in finished if state.status("kernel", h) == Status.UNKNOWN}
    assert unknown == {"gpu03"}
    assert state.reason("kernel", "gpu03") == "unreachable: connection refused"  # an answer: not retried
    assert finished["gpu03"].attempt == 1
    assert state.status("kernel", "gpu01") == Status.PASS


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


async def test_a_silent_host_is_unknown_in_bounded_time_and_marked_down(make_lab, tmp_path):
    # accepts TCP, never answers the handshake (a dead or wedged node): every try times out
    lab = await make_lab(1)
    lab.load_faults.stall_handshakes = 1000
    t0 = time.monotonic()
    state, finished = await verify(lab, tmp_path, connect_timeout=0.5)
    first = time.monotonic() - t0
    (host,) = finished
    assert state.status("kernel", host) == Status.UNKNOWN
    reason = state.reason("kernel", host)
    assert reason.startswith("unreachable: connect timeout after 0.5s"), reason
    assert f"attempt {VERIFY_RETRIES}: unreachable: connect timeout" in reason
    assert finished[host].attempt == 1 + VERIFY_RETRIES
    # (1+N) connect timeouts plus backoff (at most 0.75 + 1.5 + 3 s), with slack for a busy machine
    assert first < (1 + VERIFY_RETRIES) * 0.5 + 5.25 + 5
    # a second verify on the same transport: the host is known down, one handshake only
    lab.load_faults.stalled = 0
    state, finished = await verify(lab, tmp_path, connect_timeout=0.5, rounds=1)
    assert lab.load_faults.stalled == 1 + VERIFY_RETRIES  # a new transport: it retries again


async def test_a_host_marked_down_gets_one_handshake_per_step(make_lab, tmp_path):
    lab = await make_lab(1)
    lab.load_faults.stall_handshakes = 1000
    state, finished = await verify(lab, tmp_path, connect_timeout=0.5, rounds=2)
    assert lab.load_faults.stalled == (1 + VERIFY_RETRIES) + 1  # the second step: no retries
    (host,) = finished  # the later event: the second step's
    assert finished[host].attempt == 1
    assert state.status("kernel", host) == Status.UNKNOWN


async def test_a_host_that_answers_again_is_retried_again(make_lab):
    lab = await make_lab(1)
    lab.load_faults.stall_handshakes = 1 + VERIFY_RETRIES
    t = transport_for(lab, one_host(lab), connect_timeout=0.5)
    try:
        r = await t.run("n1", "uname -r", timeout=10, retries=VERIFY_RETRIES)
        assert r.unknown_reason and r.attempts == 1 + VERIFY_RETRIES and "n1" in t.down
        r = await t.run("n1", "uname -r", timeout=10, retries=VERIFY_RETRIES)  # stalls used up
        assert r.ok and "n1" not in t.down
        lab.load_faults.stall_handshakes = 1
        await t.close()  # a new connection is needed: its handshake stalls once, and is retried
        r = await t.run("n1", "uname -r", timeout=10, retries=VERIFY_RETRIES)
        assert r.ok and r.attempts == 2
    finally:
        await t.close()


async def test_a_command_timeout_is_not_retried(make_lab, tmp_path):
    lab = await make_lab(2, scenario={"gpu02": ["hang"]})
    lab.load_faults.drop_commands = 1
    steps = STEPS.replace("timeout: 10", "timeout: 1")
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "10-p.yaml").write_text(steps)
    rb = load_runbook(tmp_path / "steps")
    inv = load_inventory(lab.inventory)
    state = RunState()
    t = transport_for(lab, inv.hosts)
    events = []
    try:
        async for batch in Engine(rb, inv, t, state).run(rb.steps, "verify"):
            events.extend(batch)
    finally:
        await t.close()
    finished = {e.host: e for e in events if isinstance(e, HostFinished)}
    assert state.reason("kernel", "gpu02").startswith("timeout after 1s")
    assert finished["gpu02"].attempt == 1  # the real fault, reported once, in one timeout


async def test_apply_is_never_retried(make_lab):
    lab = await make_lab(1)
    lab.load_faults.drop_commands = 1
    t = transport_for(lab, one_host(lab))
    try:
        r = await t.run("n1", "touch /tmp/x", timeout=10)  # retries=0: what apply and rollback use
        assert r.unknown_reason == LOST_MID_COMMAND and r.attempts == 1
    finally:
        await t.close()


def test_the_cli_with_and_without_retries_on_a_dropping_sim(sim_process, tmp_path):
    """`runbook sim --drop-commands N` and `runbook run --verify-retries`: the same drops
    are false unknowns with 0 retries and none with the default, journaled as attempts."""
    root = Path(__file__).resolve().parents[2]
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "10-p.yaml").write_text(STEPS)
    env = {"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}
    counts = {}
    for label, extra in (("off", ["--verify-retries", "0"]), ("on", [])):
        sim = sim_process(4, extra=["--drop-commands", "2"])
        argv = [sys.executable, "-m", "runbook", "run", "--steps", str(tmp_path / "steps")]
        argv += ["--inventory", str(sim.inventory), "--state", str(tmp_path / f"state-{label}")]
        argv += ["--all", "--new-run", "--json", *extra]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
        doc = json.loads(p.stdout)
        (step,) = doc["steps"]
        counts[label] = sorted(h["status"] for h in step["hosts"].values())
        journal = "".join(f.read_text() for f in (tmp_path / f"state-{label}").rglob("*.jsonl"))
        counts[label + "-journal"] = "tried again after attempt 1: connection lost mid-command" in journal
        sim.stop()
    assert counts["off"].count("unknown") == 2, counts
    assert counts["on"] == ["fail", "fail", "fail", "pass"], counts
    assert counts["on-journal"] and not counts["off-journal"]
