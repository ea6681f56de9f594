"""A command's output reaches the SSH client whole and in order, in one write
per turn of the simulator's event loop (sim/session.py _Live), and what it
printed before it waits arrives while it is still running."""

from __future__ import annotations

from tests.sim.conftest import connect_node

LOOP = "i=0; while [ $i -lt 200 ]; do i=$((i+1)); echo line $i; echo e$i >&2; done"


def _connect(lab, name="gpu01"):
    return connect_node(lab, name)


async def test_many_lines_arrive_whole_and_in_order(make_lab):
    lab = await make_lab(1)
    async with _connect(lab) as conn:
        r = await conn.run(LOOP)
    assert r.stdout == "".join(f"line {i}\n" for i in range(1, 201))
    assert r.stderr == "".join(f"e{i}\n" for i in range(1, 201))
    assert r.exit_status == 0


async def test_what_is_printed_before_a_wait_arrives_before_the_command_ends(make_lab):
    lab = await make_lab(1)
    async with _connect(lab) as conn:
        proc = await conn.create_process("echo first; echo also; sleep 2; echo second")
        first = await proc.stdout.readline()
        second = await proc.stdout.readline()
        assert proc.exit_status is None  # still sleeping on the node
        rest = await proc.stdout.read()
        await proc.wait()
    assert (first, second, rest, proc.exit_status) == ("first\n", "also\n", "second\n", 0)
