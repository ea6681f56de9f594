"""Output is streamed per complete line as it arrives, stdout and stderr apart,
decoded as UTF-8 with replacement, and capped."""

from __future__ import annotations

import time

from runbook.transport import HostKeyPolicy
from tests.transport.conftest import inventory, known_hosts


async def _run(server, make_transport, tmp_path, command, **kw):
    t = make_transport(
        inventory(("n1", server)),
        HostKeyPolicy([known_hosts(tmp_path, server)]),
        **kw.pop("transport_kw", {}),
    )
    seen = []
    r = await t.run(
        "n1", command, timeout=5, on_line=lambda stream, line: seen.append((stream, line, time.time()))
    )
    return r, seen


async def test_lines_arrive_as_they_are_produced(server, make_transport, tmp_path):
    # Pieces: "O"/"E" prefix = stdout/stderr; 0.1 s between pieces.
    server.chunks = [b"Oone\ntw", b"Eerr1\n", b"Oo\nthr", b"Oee"]
    r, seen = await _run(server, make_transport, tmp_path, "chunks")
    assert [(s, ln) for s, ln, _ in seen] == [
        ("stdout", "one"),
        ("stderr", "err1"),
        ("stdout", "two"),
        ("stdout", "three"),
    ]
    assert (r.stdout, r.stderr, r.exit_status) == ("one\ntwo\nthree", "err1\n", 0)
    # The first line was delivered well before the command finished.
    assert r.ended - seen[0][2] > 0.25


async def test_utf8_split_across_packets_and_invalid_bytes(server, make_transport, tmp_path):
    e_acute = "é".encode()
    server.chunks = [b"Ocaf" + e_acute[:1], b"O" + e_acute[1:] + b"\r\n", b"Obad \xff byte\n"]
    r, seen = await _run(server, make_transport, tmp_path, "chunks")
    assert [ln for _, ln, _ in seen] == ["café", "bad \ufffd byte"]
    assert r.stdout == "café\r\nbad \ufffd byte\n"


async def test_output_is_capped_and_the_truncation_noted(server, make_transport, tmp_path):
    cap = 256 * 1024
    r, seen = await _run(server, make_transport, tmp_path, f"big {cap * 3}", transport_kw={"output_cap": cap})
    assert r.exit_status == 0
    assert len(r.stdout.encode()) == cap
    assert "[runbook: output truncated: kept the first 262144 bytes, dropped" in r.stderr
    assert sum(len(ln) + 1 for _, ln, _ in seen) <= cap  # streaming stops at the cap too


async def test_a_failing_line_consumer_does_not_break_the_command(server, make_transport, tmp_path):
    t = make_transport(inventory(("n1", server)), HostKeyPolicy([known_hosts(tmp_path, server)]))

    def boom(stream, line):
        raise RuntimeError("consumer bug")

    r = await t.run("n1", "echo still", timeout=5, on_line=boom)
    assert (r.exit_status, r.stdout) == (0, "still\n")
    assert (await t.run("n1", "echo next", timeout=5)).stdout == "next\n"
