"""sim/lean_ssh.py: a simulated node sends no empty SSH_MSG_IGNORE packets
(asyncssh puts one before every packet; an sshd does not), what a client reads
is the same, and a client in the same process keeps asyncssh's behaviour."""

from __future__ import annotations

import asyncio

import asyncssh
from asyncssh.connection import SSHConnection
from asyncssh.constants import MSG_IGNORE

from tests.sim.conftest import connect_node


async def test_a_node_sends_no_ignore_packets_and_answers_as_before(make_lab, monkeypatch):
    received = {"client": 0, "server": 0}
    process_ignore = SSHConnection._packet_handlers[MSG_IGNORE]

    def counting(conn, *args):
        received["client" if isinstance(conn, asyncssh.SSHClientConnection) else "server"] += 1
        return process_ignore(conn, *args)

    monkeypatch.setitem(SSHConnection._packet_handlers, MSG_IGNORE, counting)
    # asyncssh's own client, which sends them: transport/packets.py, once the
    # client's transport has been used in this process, leaves them out of every
    # client connection with an AEAD cipher
    monkeypatch.setattr(asyncssh.SSHClientConnection, "send_packet", SSHConnection.send_packet)
    lab = await make_lab(2)
    async with connect_node(lab, "gpu01") as conn:
        results = await asyncio.gather(
            conn.run("hostname; echo out; echo err >&2; exit 3"), conn.run("cat", input="a\nb\n")
        )
        assert [(r.stdout, r.stderr, r.exit_status) for r in results] == [
            ("gpu01\nout\n", "err\n", 3),
            ("a\nb\n", "", 0),
        ]
        assert "send_packet" not in vars(conn)  # the client's own connection is asyncssh's
    assert received["client"] == 0
    assert received["server"] > 0  # the in-process client still sends them
