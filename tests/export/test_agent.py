"""Signing through a real ssh-agent, started by the test on its own socket,
fed with ssh-add, and stopped by its pid."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from runbook.export import export_run, sshsig, verify_log
from runbook.export.signing_keys import SigningError, load_signer

from .conftest import PASSPHRASE, allowed_signers, keygen_verify
from .snapshot_builder import small_snapshot

pytestmark = pytest.mark.skipif(
    not (shutil.which("ssh-agent") and shutil.which("ssh-add")),
    reason="needs OpenSSH's ssh-agent and ssh-add",
)


@pytest.fixture
def agent(keys: dict):
    """An ssh-agent in the foreground (-D, so its pid is ours to stop), keys lifetime 5 min."""
    folder = Path(tempfile.mkdtemp(prefix="rb-agent-", dir="/tmp"))  # short: socket path limit
    sock = folder / "agent.sock"
    proc = subprocess.Popen(
        ["ssh-agent", "-D", "-a", str(sock), "-t", "300"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while not sock.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "ssh-agent did not start"
            time.sleep(0.02)
        askpass = folder / "askpass"
        askpass.write_text(f"#!/bin/sh\necho '{PASSPHRASE}'\n")
        askpass.chmod(0o700)
        env = dict(
            os.environ,
            SSH_AUTH_SOCK=str(sock),
            SSH_ASKPASS=str(askpass),
            SSH_ASKPASS_REQUIRE="force",
            DISPLAY=":0",
        )
        for name in ("ed25519", "rsa", "encrypted"):
            subprocess.run(
                ["ssh-add", str(keys[name])],
                env=env,
                check=True,
                timeout=30,
                capture_output=True,
                stdin=subprocess.DEVNULL,
            )
        yield str(sock)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        shutil.rmtree(folder, ignore_errors=True)


def _never(path: str) -> str:
    raise AssertionError("asked for a passphrase although the agent holds the key")


def test_first_agent_key_signs_and_ssh_keygen_accepts(agent: str, keys: dict, tmp_path: Path) -> None:
    signer = load_signer(None, agent_path=agent)
    assert signer.source == "ssh-agent"
    assert signer.fingerprint == load_signer(str(keys["ed25519"])).fingerprint
    data = tmp_path / "d"
    data.write_bytes(b"payload")
    sig = tmp_path / "d.sig"
    sig.write_bytes(signer.sign(b"payload"))
    signers = allowed_signers(tmp_path / "as", "eng", Path(f"{keys['ed25519']}.pub"))
    assert keygen_verify(data, sig, signers, "eng").returncode == 0


def test_agent_rsa_uses_sha2_512(agent: str, keys: dict, tmp_path: Path) -> None:
    signer = load_signer(f"{keys['rsa']}.pub", agent_path=agent)
    assert signer.source == "ssh-agent"
    sig = signer.sign(b"payload")
    assert sshsig.parse_signature(sig).sig_algorithm == "rsa-sha2-512"
    (tmp_path / "d").write_bytes(b"payload")
    (tmp_path / "d.sig").write_bytes(sig)
    signers = allowed_signers(tmp_path / "as", "eng", Path(f"{keys['rsa']}.pub"))
    assert keygen_verify(tmp_path / "d", tmp_path / "d.sig", signers, "eng").returncode == 0


def test_encrypted_key_in_agent_needs_no_passphrase(agent: str, keys: dict) -> None:
    signer = load_signer(str(keys["encrypted"]), agent_path=agent, passphrase_cb=_never)
    assert signer.source == "ssh-agent"
    by_fp = load_signer(signer.fingerprint, agent_path=agent)
    assert by_fp.fingerprint == signer.fingerprint


def test_key_missing_from_agent_is_a_clear_error(agent: str, keys: dict) -> None:
    with pytest.raises(SigningError, match="does not hold"):
        load_signer(f"{keys['ecdsa']}.pub", agent_path=agent)


def test_export_signed_by_agent_round_trips(agent: str, keys: dict, tmp_path: Path) -> None:
    result = export_run(
        small_snapshot(),
        tmp_path / "log.json",
        sign_key="agent",
        identity="alice@example.com",
        agent_path=agent,
    )
    signers = allowed_signers(tmp_path / "as", "alice@example.com", Path(f"{keys['ed25519']}.pub"))
    assert keygen_verify(result.log, result.signature, signers, "alice@example.com").returncode == 0
    report = verify_log(result.log, allowed_signers=signers)
    assert report.ok, report.problems
