"""Item 2 of issue 16: host-key pins belong to the state directory; @revoked,
@cert-authority, garbage lines and algorithm mismatches are refused with their
real cause."""

from __future__ import annotations

from pathlib import Path

import asyncssh
import pytest

from runbook.transport import HostKeyPolicy
from runbook.transport.hostkeys import fingerprint
from tests.sshd_server import sshd_server  # noqa: F401
from tests.transport.conftest import client_key_file, inventory, keys, make_transport, server  # noqa: F401


async def test_revoked_key_is_refused_as_revoked(server, make_transport, tmp_path, keys) -> None:
    kh = tmp_path / "known_hosts"
    kh.write_text("@revoked " + server.known_hosts_line())
    for trust in (False, True):
        pins = tmp_path / f"pins{trust}"
        t = make_transport(inventory(("gpu07", server)), HostKeyPolicy([kh], trust_new=trust, pin_file=pins))
        r = await t.run("gpu07", "echo hi", timeout=5)
        assert r.unknown_reason == (
            f"host key refused: host key for gpu07 is revoked: "
            f"{fingerprint(keys.host)} is marked @revoked in {kh}"
        ), trust
        assert not pins.exists() and server.stats.execs == []


def test_garbage_known_hosts_lines_are_reported_by_lint(tmp_path: Path) -> None:
    from .helpers import cli, project

    kh = tmp_path / "kh"
    kh.write_text("# ok\n\n127.0.0.1 ssh-ed25519 notbase64!!\nhalf-a-line\n@bogus h ssh-ed25519 AAAA\n")
    args = project(tmp_path, inventory=f"all:\n  vars:\n    runbook_known_hosts: {kh}\n  hosts:\n    n1:\n")
    p = cli("lint", *args)
    assert p.returncode == 2, p.stderr
    for line in (3, 4, 5):
        assert f"{kh}:{line}: bad known_hosts entry" in p.stderr


async def test_plain_key_where_a_certificate_is_expected(server, make_transport, tmp_path, keys) -> None:
    ca = asyncssh.generate_private_key("ssh-ed25519")
    pub = ca.export_public_key("openssh").decode().split()
    kh = tmp_path / "known_hosts"
    kh.write_text(f"@cert-authority [{server.addr}]:{server.port} {pub[0]} {pub[1]}\n")
    pins = tmp_path / "pins"
    t = make_transport(inventory(("gpu07", server)), HostKeyPolicy([kh], trust_new=True, pin_file=pins))
    r = await t.run("gpu07", "echo hi", timeout=5)
    assert r.unknown_reason == (
        f"host key refused: host key for gpu07 is a plain key "
        f"{fingerprint(keys.host)}, but {kh} expects a certificate signed "
        f"by its @cert-authority"
    )
    assert not pins.exists()


async def test_host_certificate_signed_by_the_ca_is_accepted(keys, make_transport, tmp_path) -> None:
    from tests.transport.loopback_ssh import LoopbackServer

    ca = asyncssh.generate_private_key("ssh-ed25519")
    other_ca = asyncssh.generate_private_key("ssh-ed25519")
    cert = ca.generate_host_certificate(keys.host, "gpu07", principals=["127.0.0.1"])
    srv = await LoopbackServer((keys.host, cert), keys.client).start()  # presents the certificate
    try:
        for signer, ok in ((ca, True), (other_ca, False)):
            pub = signer.export_public_key("openssh").decode().split()
            kh = tmp_path / f"known_hosts_{ok}"
            kh.write_text(f"@cert-authority [{srv.addr}]:{srv.port} {pub[0]} {pub[1]}\n")
            t = make_transport(inventory(("gpu07", srv)), HostKeyPolicy([kh]))
            r = await t.run("gpu07", "true", timeout=5)
            if ok:
                assert r.ok, r.unknown_reason
            else:
                assert r.unknown_reason.startswith("host key refused: "), r.unknown_reason
                assert "gpu07" in r.unknown_reason
    finally:
        await srv.stop()


@pytest.mark.sshd
def test_pins_belong_to_the_state_directory(tmp_path: Path, sshd_server) -> None:
    from tests.integration.test_real_sshd import hosts_of, run, setup

    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    steps, inv = setup(tmp_path, sshd_server, empty)
    first = run(tmp_path, steps, inv, "--trust-new-hosts")
    assert hosts_of(first)["kernel"]["status"] == "pass", first.stderr
    pins = tmp_path / "state" / "known_hosts"
    fp = fingerprint(sshd_server.host_public_key())
    assert f"pinned 1 new host key(s) into {pins}:" in first.stderr and f"real1 {fp}" in first.stderr
    sshd_server.new_host_key()  # reinstalled, or someone in the middle
    sshd_server.restart()
    for extra in (["--new-run", "--trust-new-hosts"], ["--trust-new-hosts"], ["--new-run"]):
        proc = run(tmp_path, steps, inv, *extra)
        assert proc.returncode == 3, (extra, proc.stderr)
        reasons = {r["reason"] for r in hosts_of(proc).values()}
        assert all("changed" in r and fp in r for r in reasons), (extra, reasons)
        assert "pinned" not in proc.stderr
    assert pins.read_text().count("ssh-ed25519") == 1


@pytest.mark.sshd
def test_rsa_known_key_against_an_ed25519_server_says_so(tmp_path: Path, sshd_server) -> None:
    from tests.integration.test_real_sshd import hosts_of, run, setup

    rsa = asyncssh.generate_private_key("ssh-rsa", key_size=2048)
    pub = rsa.export_public_key("openssh").decode().split()
    known = tmp_path / "known_hosts"
    known.write_text(f"[127.0.0.1]:{sshd_server.port} {pub[0]} {pub[1]}\n")
    steps, inv = setup(tmp_path, sshd_server, known)
    proc = run(tmp_path, steps, inv)
    assert proc.returncode == 3, proc.stderr
    for res in hosts_of(proc).values():
        assert res["reason"].startswith(
            "host key refused: host key algorithm mismatch for real1: "
            f"{known} knows only ssh-rsa keys, the host offers "
            "ssh-ed25519 SHA256:"
        ), res["reason"]
