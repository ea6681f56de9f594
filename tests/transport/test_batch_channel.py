"""Several read-only commands in one channel (`Transport.run_many`,
runbook/transport/batched.py), on the simulator and on a real OpenSSH sshd:
each result is the one its own channel gives (`Transport.run`), a command that
hangs times out alone and the others are not held to its timeout, a command
killed by a signal is reported as from its own channel, and a connection lost
under the batch goes on as `run` goes on (the attempt noted)."""

from __future__ import annotations

import random
import time

import pytest

from runbook.definition.model import Host
from runbook.sim.lab import Lab
from runbook.transport import HostKeyPolicy, Transport
from runbook.transport.session import LOST_MID_COMMAND
from tests.sshd_server import sshd_server  # noqa: F401 - the fixture

SAME_AS_ALONE = [
    "hostname",
    "printf 'no newline'",
    "exit 3",
    "set -e; false; echo never",
    "cd /tmp && pwd",
    "pwd",
    "echo err >&2; echo out",
    "nosuchtool_xyz",
    "echo 'unbalanced",
    "printf ''",
    "echo $0",
]


@pytest.fixture
async def sim_transport(tmp_path):
    base = f"127.{random.randint(100, 240)}.{random.randint(1, 250)}.0"
    lab = await Lab.start(tmp_path / "lab", nodes=1, base_address=base, port=0, save_state=False)
    node = lab.node(lab.names()[0])
    hosts = {
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
    t = Transport(hosts, policy=HostKeyPolicy([lab.known_hosts]), ssh_config=[], connect_timeout=5)
    t.lab = lab
    try:
        yield t
    finally:
        await t.close()
        await lab.stop()


@pytest.fixture
async def sshd_transport(sshd_server):
    hosts = {
        "n1": Host(
            "n1",
            {
                "ansible_host": sshd_server.addr,
                "ansible_port": sshd_server.port,
                "ansible_user": sshd_server.user,
                "ansible_ssh_private_key_file": str(sshd_server.client_key),
            },
        )
    }
    t = Transport(hosts, policy=HostKeyPolicy([sshd_server.known_hosts]), ssh_config=[], connect_timeout=5)
    try:
        yield t
    finally:
        await t.close()


async def run_many(t: Transport, commands: list[tuple[str, float]], retries: int = 0):
    started: list[int] = []
    results: dict = {}
    lines: dict[int, list] = {}
    await t.run_many(
        "n1",
        commands,
        on_start=started.append,
        on_result=results.__setitem__,
        on_line_for=lambda i: lambda stream, line: lines.setdefault(i, []).append((stream, line)),
        retries=retries,
    )
    assert started == list(range(len(commands)))  # each started once, in order
    assert sorted(results) == started
    return [results[i] for i in started], lines


def seen(r):
    return (r.exit_status, r.stdout, r.stderr, r.unknown_reason)


async def _same_as_alone(t: Transport, commands: list[str]):
    await t.run("n1", "true", timeout=10)  # an open connection: what a batch runs on
    alone = [seen(await t.run("n1", c, timeout=10)) for c in commands]
    together, lines = await run_many(t, [(c, 10) for c in commands])
    assert [seen(r) for r in together] == alone
    assert all(r.attempts == 1 and r.started <= r.ended for r in together)
    assert lines[6] == [("stdout", "out"), ("stderr", "err")]


async def test_sim_each_result_as_from_its_own_channel(sim_transport):
    await _same_as_alone(sim_transport, SAME_AS_ALONE)


@pytest.mark.sshd
async def test_sshd_each_result_as_from_its_own_channel(sshd_transport):
    await _same_as_alone(sshd_transport, SAME_AS_ALONE)


@pytest.mark.sshd
async def test_sshd_a_command_showing_the_script_forges_no_marker(sshd_transport):
    t = sshd_transport
    await t.run("n1", "true", timeout=10)
    together, _ = await run_many(
        t, [("echo a", 10), ("tr '\\0' ' ' < /proc/$PPID/cmdline", 10), ("echo c", 10)]
    )
    assert [seen(r)[:2] for r in together] == [(0, "a\n"), (0, together[1].stdout), (0, "c\n")]
    assert "printf" in together[1].stdout  # it did print the script, halves of the token and all


@pytest.mark.sshd
async def test_sshd_killed_by_a_signal_as_from_its_own_channel(sshd_transport):
    t = sshd_transport
    await t.run("n1", "true", timeout=10)
    alone = seen(await t.run("n1", "kill -9 $$", timeout=10))
    assert alone[3] == "killed by signal KILL"
    together, _ = await run_many(t, [("echo a", 10), ("kill -9 $$", 10), ("echo c", 10)])
    assert [seen(r) for r in together] == [(0, "a\n", "", None), alone, (0, "c\n", "", None)]


async def _hang_times_out_alone(t: Transport):
    await t.run("n1", "true", timeout=10)
    t0 = time.monotonic()
    together, _ = await run_many(t, [("echo one", 10), ("sleep 5; echo late", 1), ("echo three", 2)])
    one, hung, three = together
    assert seen(one) == (0, "one\n", "", None)
    assert (hung.exit_status, hung.unknown_reason) == (None, "timeout after 1s")
    assert seen(three) == (0, "three\n", "", None)  # not held to the hung one's time
    assert hung.ended - hung.started < 3
    assert time.monotonic() - t0 < 4.5


async def test_sim_a_hung_command_times_out_alone(sim_transport):
    await _hang_times_out_alone(sim_transport)


@pytest.mark.sshd
async def test_sshd_a_hung_command_times_out_alone(sshd_transport):
    await _hang_times_out_alone(sshd_transport)


async def test_sim_first_command_connects_alone(sim_transport):
    t = sim_transport
    together, _ = await run_many(t, [("hostname", 10), ("echo b", 10), ("echo c", 10)])
    assert [r.exit_status for r in together] == [0, 0, 0]
    assert together[0].stdout.strip() == t.lab.names()[0]


@pytest.mark.parametrize("retries", [0, 2])
async def test_sim_connection_lost_under_the_batch(sim_transport, retries):
    t = sim_transport
    await t.run("n1", "true", timeout=10)
    t.lab.load_faults.drop_commands = 1  # the next channel: the batch's
    together, _ = await run_many(t, [("echo a", 10), ("echo b", 10), ("echo c", 10)], retries=retries)
    a, b, c = together
    assert t.lab.load_faults.dropped == 1
    if retries:
        assert (a.exit_status, a.stdout, a.attempts) == (0, "a\n", 2)
        assert f"tried again after attempt 1: {LOST_MID_COMMAND}" in a.stderr
    else:
        assert (a.exit_status, a.unknown_reason, a.attempts) == (None, LOST_MID_COMMAND, 1)
    assert [(r.stdout, r.attempts) for r in (b, c)] == [("b\n", 1), ("c\n", 1)]


@pytest.mark.sshd
async def test_sshd_commands_too_long_for_one_script_go_in_several(sshd_transport, monkeypatch):
    from runbook.transport import batched

    t = sshd_transport
    await t.run("n1", "true", timeout=10)
    scripts = []
    real = batched.execute_batch

    async def counted(conn, script, *a, **kw):
        scripts.append(len(script.text))
        return await real(conn, script, *a, **kw)

    monkeypatch.setattr(batched, "execute_batch", counted)
    big = [(f"printf %s {c * 30000} | wc -c", 10) for c in "abcdef"]  # 180 KB: over execve's 128 KiB
    together, _ = await run_many(t, big)
    assert [seen(r) for r in together] == [(0, "30000\n", "", None)] * 6
    assert len(scripts) == 3 and max(scripts) <= batched.SCRIPT_LIMIT
