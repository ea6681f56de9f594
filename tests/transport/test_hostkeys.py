"""Host keys are always verified: strict by default, opt-in trust-on-first-use
that pins new keys and refuses changed ones."""

from __future__ import annotations

import re
from pathlib import Path

import asyncssh
import pytest

from runbook.errors import InputError
from runbook.transport import HostKeyPolicy
from runbook.transport.hostkeys import fingerprint, known_hosts_name
from tests.transport.conftest import inventory, known_hosts

RUNBOOK_SRC = Path(__file__).resolve().parents[2] / "runbook"


def _fp(key) -> str:
    return fingerprint(key)


async def test_strict_refuses_a_host_with_no_known_key(server, make_transport, tmp_path):
    seen = []
    t = make_transport(
        inventory(("gpu07", server)),
        HostKeyPolicy([tmp_path / "missing"]),
        on_host_key=lambda *a: seen.append(a),
    )
    r = await t.run("gpu07", "echo hi", timeout=5)
    assert r.unknown_reason == ("host key refused: no known key for gpu07 (use --trust-new-hosts to pin it)")
    assert (r.exit_status, r.started_remote, r.attempts) == (None, False, 1)
    assert server.stats.execs == [] and seen == []


async def test_a_known_key_is_accepted_and_reported_as_evidence(server, make_transport, tmp_path, keys):
    seen = []
    t = make_transport(
        inventory(("gpu07", server)),
        HostKeyPolicy([known_hosts(tmp_path, server)]),
        on_host_key=lambda *a: seen.append(a),
    )
    assert (await t.run("gpu07", "echo hi", timeout=5)).ok
    assert seen == [("gpu07", _fp(keys.host), "known_hosts")]


async def test_runbook_known_hosts_from_the_inventory_is_used(server, make_transport, tmp_path):
    kh = known_hosts(tmp_path, server, name="sim_known_hosts")
    t = make_transport(inventory(("gpu07", server), runbook_known_hosts=str(kh)), HostKeyPolicy([]))
    assert (await t.run("gpu07", "true", timeout=5)).ok


async def test_a_changed_key_is_refused_naming_the_file(server, make_transport, tmp_path, keys):
    kh = tmp_path / "known_hosts"
    kh.write_text(server.known_hosts_line(keys.host2))  # what we knew: another key
    t = make_transport(inventory(("gpu07", server)), HostKeyPolicy([kh]))
    r = await t.run("gpu07", "echo hi", timeout=5)
    assert r.unknown_reason == (
        f"host key refused: host key for gpu07 changed: expected {_fp(keys.host2)}, "
        f"got {_fp(keys.host)} — if the node was reinstalled, remove the old key from {kh}"
    )
    assert server.stats.execs == []


async def test_trust_new_pins_then_refuses_a_changed_key(server, make_transport, tmp_path, keys):
    pins = tmp_path / "run" / "known_hosts"
    seen = []
    policy = HostKeyPolicy([], trust_new=True, pin_file=pins)
    t = make_transport(inventory(("gpu07", server)), policy, on_host_key=lambda *a: seen.append(a))
    r = await t.run("gpu07", "echo hi", timeout=5)
    assert r.ok
    assert seen == [("gpu07", _fp(keys.host), "pinned")]
    pub = keys.host.export_public_key("openssh").decode().split()
    assert pins.read_text() == f"[127.0.0.1]:{server.port} {pub[0]} {pub[1]}\n"
    assert [p.name for p in pins.parent.iterdir()] == ["known_hosts"]  # no temp file left
    pinned = pins.read_text()

    # The node is "reinstalled": same address and port, another key.
    await server.restart(host_key=keys.host2)
    r = await t.run("gpu07", "echo again", timeout=5)  # same run: the in-memory pin refuses
    assert r.unknown_reason.startswith(
        f"host key refused: host key for gpu07 changed: expected {_fp(keys.host)}, got {_fp(keys.host2)}"
    )
    assert r.unknown_reason.endswith(f"remove the old key from {pins}")
    # A later run, reading the pin file, refuses it too, and never re-pins.
    t2 = make_transport(inventory(("gpu07", server)), HostKeyPolicy([], trust_new=True, pin_file=pins))
    r2 = await t2.run("gpu07", "echo again", timeout=5)
    assert r2.unknown_reason == r.unknown_reason
    assert pins.read_text() == pinned
    assert server.stats.execs == ["echo hi"]


async def test_trust_new_reuses_a_pin_without_pinning_again(server, make_transport, tmp_path, keys):
    pins = tmp_path / "pins"
    t = make_transport(inventory(("gpu07", server)), HostKeyPolicy([], trust_new=True, pin_file=pins))
    assert (await t.run("gpu07", "true", timeout=5)).ok
    seen = []
    t2 = make_transport(
        inventory(("gpu07", server)),
        HostKeyPolicy([], trust_new=True, pin_file=pins),
        on_host_key=lambda *a: seen.append(a),
    )
    assert (await t2.run("gpu07", "true", timeout=5)).ok
    assert seen == [("gpu07", _fp(keys.host), "known_hosts")]
    assert len(pins.read_text().splitlines()) == 1


async def test_known_hosts_none_is_what_would_accept_any_key(
    server, tmp_path, make_transport, client_key_file
):
    """The one place `known_hosts=None` appears: proving it turns checking off."""
    async with asyncssh.connect(
        server.addr,
        server.port,
        username="root",
        client_keys=[client_key_file],
        known_hosts=None,
        config=[],
        agent_path=None,
    ) as conn:
        assert (await conn.run("echo accepted", check=False)).stdout == "accepted\n"
    t = make_transport(inventory(("gpu07", server)), HostKeyPolicy([]))
    r = await t.run("gpu07", "echo accepted", timeout=5)
    assert r.unknown_reason.startswith("host key refused")


def test_nothing_in_runbook_turns_host_key_checking_off():
    offenders = [
        f"{p}:{i}"
        for p in RUNBOOK_SRC.rglob("*.py")
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"known_hosts\s*=\s*None", line)
    ]
    assert offenders == []


def test_ssh_config_cannot_turn_checking_off(tmp_path):
    # `UserKnownHostsFile none` in ssh_config makes asyncssh skip checking; we never
    # let asyncssh read the config for known_hosts (we always pass a callable).
    from runbook.transport.options import TargetResolver

    cfg = tmp_path / "config"
    cfg.write_text("Host *\n  UserKnownHostsFile none\n  StrictHostKeyChecking no\n")
    t = TargetResolver([cfg]).for_host("n1", {})
    assert t.known_hosts_files == ()


def test_bad_known_hosts_line_is_reported_with_file_and_line(tmp_path):
    kh = tmp_path / "kh"
    kh.write_text("# comment\n[127.0.0.1]:22 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPlaceholder\nnonsense\n")
    with pytest.raises(InputError) as e:
        HostKeyPolicy([kh])
    # both garbage lines, the unreadable key too (issue 16: never silently ignored)
    assert str(e.value).startswith(f"{kh}:2: bad known_hosts entry: not a public key")
    assert f"\n{kh}:3: bad known_hosts entry" in str(e.value)


def test_trust_new_needs_a_pin_file():
    with pytest.raises(ValueError):
        HostKeyPolicy([], trust_new=True)


def test_known_hosts_name_uses_brackets_only_off_port_22():
    assert known_hosts_name("10.0.0.7", 22) == "10.0.0.7"
    assert known_hosts_name("10.0.0.7", None) == "10.0.0.7"
    assert known_hosts_name("127.0.1.7", 2222) == "[127.0.1.7]:2222"


def test_pins_of_a_burst_are_written_together_and_appended(tmp_path, keys):
    pins = tmp_path / "pins"
    pins.write_text(
        "# kept\n[h0]:2222 " + " ".join(keys.stranger.export_public_key("openssh").decode().split()[:2])
    )  # no final newline
    policy = HostKeyPolicy([], trust_new=True, pin_file=pins)
    policy.pin("h1", 2222, keys.host)
    policy.pin("h2", None, keys.host2)
    assert pins.read_text().count("\n") == 1  # nothing written before flush
    policy.flush()
    lines = pins.read_text().splitlines()
    assert [ln.split()[0] for ln in lines] == ["#", "[h0]:2222", "[h1]:2222", "h2"]
    known, _, _ = HostKeyPolicy([pins]).lookup("h1", "", 2222)
    assert [k.public_data for k, _ in known] == [keys.host.public_data]


def _line(host: str, key) -> str:
    return f"{host} " + " ".join(key.export_public_key("openssh").decode().split()[:2]) + "\n"


def test_a_lookup_is_answered_again_from_memory_until_a_key_is_pinned_or_a_file_added(
    tmp_path, keys, monkeypatch
):
    """Each connection asks for its endpoint's keys twice (connect.py, then asyncssh):
    the second answer is the first one, not every file matched again, and a key pinned
    or a known_hosts file added in between is in the next answer. A file with no entry
    (only comments) is not matched at all."""
    site = tmp_path / "known_hosts"
    site.write_text(_line("[node1]:2222", keys.host) + "@revoked " + _line("*", keys.stranger))
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("# nothing here yet\n\n")
    policy = HostKeyPolicy([site, empty], trust_new=True, pin_file=tmp_path / "pins")
    matched = []
    real_match = asyncssh.SSHKnownHosts.match
    monkeypatch.setattr(
        asyncssh.SSHKnownHosts, "match", lambda kh, *a: (matched.append(a), real_match(kh, *a))[1]
    )
    first = policy.lookup("node1", "10.0.0.1", 2222)
    assert [k.public_data for k, _ in first[0]] == [keys.host.public_data]
    assert [k.public_data for k, _ in first[2]] == [keys.stranger.public_data]
    assert len(matched) == 2  # the site file and its @revoked lines; not the empty file
    assert policy.lookup("node1", "10.0.0.1", 2222) == first and len(matched) == 2
    first[0].clear()  # an answer is the caller's own: changing it changes no later one
    assert policy.lookup("node1", "10.0.0.1", 2222)[0]

    assert policy.lookup("node2", "10.0.0.2", 2222)[0] == []
    policy.pin("node2", 2222, keys.host2)  # trusted on first use by another connection
    known = policy.lookup("node2", "10.0.0.2", 2222)[0]
    assert [(k.public_data, p) for k, p in known] == [(keys.host2.public_data, tmp_path / "pins")]

    other = tmp_path / "more_known_hosts"
    other.write_text(_line("[node3]:2222", keys.host2))
    assert policy.lookup("node3", "10.0.0.3", 2222)[0] == []
    policy.add_known_hosts(other)
    assert [k.public_data for k, _ in policy.lookup("node3", "10.0.0.3", 2222)[0]] == [keys.host2.public_data]
    assert policy.files == [site, empty, other]
