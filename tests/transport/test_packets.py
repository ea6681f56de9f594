"""asyncssh's per-packet extras the transport leaves out (transport/packets.py):
the same bytes from the one-key GCM cipher, no padding IGNORE before each
packet with an AEAD cipher (as before with another), keepalives sent and a
silent server given up as before."""

from __future__ import annotations

import asyncio
import os

import asyncssh
import pytest
from asyncssh.connection import SSHClientConnection, SSHConnection
from asyncssh.constants import MSG_IGNORE
from asyncssh.crypto.cipher import GCMCipher

import runbook.transport.transport  # noqa: F401  (applies packets.lighter_packets, as the transport does)
from runbook.transport import packets


@pytest.mark.parametrize("name,key_size", [("aes128-gcm", 16), ("aes256-gcm", 32)])
def test_one_key_gcm_gives_asyncssh_gcm_bytes(name, key_size):
    key = os.urandom(key_size)
    iv = os.urandom(4) + (2**64 - 3).to_bytes(8, "big")  # the invocation counter wraps on the way
    ours, theirs = packets._OneKeyGCM(name, key, iv), GCMCipher(name, key, iv)
    peer_ours, peer_theirs = packets._OneKeyGCM(name, key, iv), GCMCipher(name, key, iv)
    for n in (0, 1, 15, 16, 17, 300, 32768, 5):
        header, data = os.urandom(4), os.urandom(n)
        sent = ours.encrypt_and_sign(header, data)
        assert sent == theirs.encrypt_and_sign(header, data)
        body, mac = sent[0][len(header) :], sent[1]
        assert peer_ours.verify_and_decrypt(header, body, mac) == data
        assert peer_theirs.verify_and_decrypt(header, body, mac) == data
    assert ours._iv == theirs._iv


def test_one_key_gcm_refuses_a_changed_packet():
    key, iv = os.urandom(16), os.urandom(12)
    header, body = os.urandom(4), os.urandom(64)
    packet, mac = packets._OneKeyGCM("aes128-gcm", key, iv).encrypt_and_sign(header, body)
    changed = bytearray(packet[4:])
    changed[3] ^= 1
    receiver = packets._OneKeyGCM("aes128-gcm", key, iv)
    assert receiver.verify_and_decrypt(header, bytes(changed), mac) is None


def test_the_transport_uses_it():
    from asyncssh import encryption

    assert encryption.GCMCipher is packets._OneKeyGCM


class _Counts:
    """IGNORE packets each side receives, and the client's keepalive requests."""

    def __init__(self, monkeypatch):
        self.ignores = {"client": 0, "server": 0}
        self.keepalives = 0
        handlers = SSHConnection._packet_handlers
        process_ignore = handlers[MSG_IGNORE]

        def counting_ignore(conn, *args):
            self.ignores["client" if conn.is_client() else "server"] += 1
            return process_ignore(conn, *args)

        monkeypatch.setitem(handlers, MSG_IGNORE, counting_ignore)
        request = SSHClientConnection._make_keepalive_request

        async def counting_request(conn):
            self.keepalives += 1
            await request(conn)

        monkeypatch.setattr(SSHClientConnection, "_make_keepalive_request", counting_request)


async def _connect(server, client_key_file, **kw) -> asyncssh.SSHClientConnection:
    return await asyncssh.connect(
        server.addr,
        server.port,
        username="root",
        client_keys=[client_key_file],
        known_hosts=None,
        config=[],
        agent_path=None,
        **kw,
    )


async def _commands(conn, n: int) -> None:
    for i in range(n):
        r = await conn.run(f"echo {i}", check=True)
        assert r.stdout == f"{i}\n"


async def test_no_padding_ignore_with_aes_gcm(server, client_key_file, monkeypatch):
    counts = _Counts(monkeypatch)
    conn = await _connect(server, client_key_file, encryption_algs=["aes128-gcm@openssh.com"])
    async with conn:
        await _commands(conn, 5)
    assert server.stats.execs == [f"echo {i}" for i in range(5)]
    assert counts.ignores["server"] == 0
    # the in-process server is asyncssh too, and keeps its own padding
    assert counts.ignores["client"] > 0


async def test_padding_ignore_kept_with_a_cipher_that_is_not_aead(server, client_key_file, monkeypatch):
    counts = _Counts(monkeypatch)
    conn = await _connect(server, client_key_file, encryption_algs=["aes128-ctr"])
    async with conn:
        await _commands(conn, 5)
    assert counts.ignores["server"] >= 5 * 3  # channel open, exec, close: each after an IGNORE


async def test_keepalive_waits_while_the_server_speaks(server, client_key_file, monkeypatch):
    counts = _Counts(monkeypatch)
    timers = []
    set_timer = SSHConnection._set_keepalive_timer
    monkeypatch.setattr(SSHClientConnection, "_set_keepalive_timer", lambda c: timers.append(set_timer(c)))
    conn = await _connect(server, client_key_file, keepalive_interval=0.3, keepalive_count_max=2)
    async with conn:
        await _commands(conn, 20)
        assert len(timers) == 1  # set once after auth, not again for every read
        loop = asyncio.get_running_loop()
        end = loop.time() + 1.0
        while loop.time() < end:  # an answer at least every ~0.1 s: never idle for 0.3 s
            await conn.run("sleep 0.1", check=True)
        assert counts.keepalives == 0
        await asyncio.sleep(0.8)  # idle: keepalives go out, the server answers them
        assert counts.keepalives >= 1
        assert not conn.is_closed()


async def test_a_silent_server_is_given_up(server, client_key_file, monkeypatch):
    counts = _Counts(monkeypatch)
    conn = await _connect(server, client_key_file, keepalive_interval=0.2, keepalive_count_max=2)
    await conn.run("echo hi", check=True)
    chan, _ = await conn.create_session(asyncssh.SSHClientSession, "freeze")  # stops reading
    try:
        await asyncio.wait_for(conn.wait_closed(), 10)
    finally:
        conn.close()
    assert counts.keepalives == 2  # count_max sent unanswered, then the connection is dropped


async def test_set_keepalive_takes_effect_at_once(server, client_key_file, monkeypatch):
    counts = _Counts(monkeypatch)
    conn = await _connect(server, client_key_file, keepalive_interval=60)
    async with conn:
        await conn.run("echo hi", check=True)
        conn.set_keepalive(0.2)
        await asyncio.sleep(0.5)
        assert counts.keepalives >= 1
        conn.set_keepalive(0)
        seen = counts.keepalives
        await asyncio.sleep(0.5)
        assert counts.keepalives <= seen + 1  # (one may have been on its way)
