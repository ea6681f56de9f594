"""One socket write per turn of the event loop for an SSH connection (the sim's
server side, sim/server.py, and the client's on asyncio's loop,
transport/connect.py; coalesce_client says why not on uvloop).

asyncssh hands every packet to its transport at once (connection.py `_send`),
and an asyncio socket transport with nothing queued sends it at once: a command
cost a dozen send() system calls (channel open, data, exit status, EOF, close,
window adjusts), most of the simulator's CPU once its shell was cheap. Packets
queued within one turn of the loop go out together when it turns next (before
it waits for the sockets again): the same bytes in the same order.
"""

from __future__ import annotations

import asyncio


class CoalescedWrites:
    """Wraps an asyncio transport: write() queues, the loop's next turn sends."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop):
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not data:
            return
        if not self._pending:
            self._loop.call_soon(self.flush)
        self._pending.append(data)

    def flush(self) -> None:
        if not self._pending:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        try:
            self._transport.write(data)
        except ConnectionError:  # as asyncssh's own _send: a connection gone meanwhile
            pass

    def close(self) -> None:
        self.flush()  # a close sends what was written before it
        self._transport.close()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def abort(self) -> None:
        self._pending.clear()  # an abort drops what is not sent yet, as the transport's own does
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(len(d) for d in self._pending)

    def __getattr__(self, name: str):
        return getattr(self._transport, name)


def coalesce(conn) -> None:
    """Put a connection's transport behind CoalescedWrites (asyncssh keeps it in
    `_transport` from connection_made on, asyncssh/connection.py); a version that
    keeps it elsewhere is left as it is: slower, never wrong."""
    transport = getattr(conn, "_transport", None)
    if transport is None or isinstance(transport, CoalescedWrites) or not hasattr(transport, "write"):
        return
    conn._transport = CoalescedWrites(transport, asyncio.get_running_loop())


def coalesce_client(conn) -> None:
    """coalesce() for a connection of runbook's client, on asyncio's own loop only.

    On uvloop (`runbook run` of 200 host-commands or more, event_loop.py) the
    client sends each packet when asyncssh hands it over. A loop turn of a large
    run is long (hundreds of results parsed, judged and journalled): coalesced,
    every command it starts waits for the turn's end before the node sees it, and
    with the node's side coalescing too (the simulator, like sshd, writes what a
    pass of its loop produced at the pass's end) each side's work reaches the
    other only between turns. Whole runbook at 1,000 nodes, a new lab per run, 5
    runs each: 37.7-44.2 s with the wrapper, 34.6-38.6 s without, and less client
    CPU without (bench/README.md, "After session 14"). On asyncio's loop the
    wrapper stays: its runs are small, and there it saved client CPU (session 8)."""
    if not type(asyncio.get_running_loop()).__module__.startswith("uvloop"):
        coalesce(conn)
