"""CoalescedWrites (transport/coalesce.py, on the sim's server and the client's
connections): the same bytes in the same order, one transport write per turn
of the event loop."""

from __future__ import annotations

import asyncio

import pytest

from runbook.transport.coalesce import CoalescedWrites


class Recorder:
    def __init__(self):
        self.writes: list[bytes] = []
        self.events: list[str] = []

    def write(self, data):
        self.writes.append(data)

    def close(self):
        self.events.append("close")

    def abort(self):
        self.events.append("abort")

    def get_extra_info(self, name, default=None):
        return {"peername": ("127.0.0.1", 22)}.get(name, default)


async def test_writes_of_one_turn_go_out_together_in_order():
    t = Recorder()
    w = CoalescedWrites(t, asyncio.get_running_loop())
    w.write(b"a")
    w.write(b"")
    w.write(b"bc")
    assert t.writes == []
    await asyncio.sleep(0)
    assert t.writes == [b"abc"]
    w.write(b"d")
    await asyncio.sleep(0)
    assert t.writes == [b"abc", b"d"]
    assert w.get_extra_info("peername") == ("127.0.0.1", 22)  # the rest is the transport's


async def test_close_sends_what_came_before_and_abort_drops_it():
    t = Recorder()
    w = CoalescedWrites(t, asyncio.get_running_loop())
    w.write(b"bye")
    w.close()
    assert (t.writes, t.events) == ([b"bye"], ["close"])
    t2 = Recorder()
    w2 = CoalescedWrites(t2, asyncio.get_running_loop())
    w2.write(b"lost")
    w2.abort()
    await asyncio.sleep(0)
    assert (t2.writes, t2.events) == ([], ["abort"])


class _Conn:
    def __init__(self, transport):
        self._transport = transport


def _wrapped(conn_maker) -> bool:
    conn = _Conn(Recorder())
    conn_maker(conn)
    return isinstance(conn._transport, CoalescedWrites)


def test_the_client_coalesces_on_asyncio_and_not_on_uvloop_the_sim_on_both():
    from runbook.transport.coalesce import coalesce, coalesce_client

    uvloop = pytest.importorskip("uvloop")

    async def client() -> bool:
        return _wrapped(coalesce_client)

    async def sim() -> bool:
        return _wrapped(coalesce)

    assert asyncio.run(client()) is True
    assert asyncio.run(sim()) is True
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        assert runner.run(client()) is False
        assert runner.run(sim()) is True
