"""SSHSIG both ways with the real ssh-keygen: ours verifies in ssh-keygen,
ssh-keygen's verifies in ours, and the same things are refused by both."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from runbook.export import sshsig
from runbook.export.signing_keys import load_signer

from .conftest import SSH_KEYGEN, allowed_signers, keygen_verify

KEY_TYPES = ["ed25519", "ecdsa", "rsa"]
DATA = b'{"format":"runbook-completion-log","x":"\xc3\xa9"}'


def _sign_ours(tmp_path: Path, key: Path) -> tuple[Path, Path]:
    data = tmp_path / "data.json"
    data.write_bytes(DATA)
    sig = tmp_path / "data.json.sig"
    sig.write_bytes(load_signer(str(key)).sign(DATA))
    return data, sig


def _sign_keygen(tmp_path: Path, key: Path, namespace: str = "runbook") -> tuple[Path, Path]:
    data = tmp_path / "data.json"
    data.write_bytes(DATA)
    subprocess.run(
        [SSH_KEYGEN, "-Y", "sign", "-f", str(key), "-n", namespace, str(data)],
        check=True,
        capture_output=True,
        timeout=30,
    )
    return data, Path(str(data) + ".sig")


@pytest.mark.parametrize("kind", KEY_TYPES)
def test_ssh_keygen_accepts_our_signature(tmp_path: Path, keys: dict, kind: str) -> None:
    data, sig = _sign_ours(tmp_path, keys[kind])
    signers = allowed_signers(tmp_path / "as", "eng@site", Path(f"{keys[kind]}.pub"))
    done = keygen_verify(data, sig, signers, "eng@site")
    assert done.returncode == 0, done.stderr
    assert 'Good "runbook" signature for eng@site' in done.stdout
    text = sig.read_bytes()
    assert text.startswith(b"-----BEGIN SSH SIGNATURE-----\n")
    assert text.endswith(b"-----END SSH SIGNATURE-----\n")
    assert all(len(line) <= 70 for line in text.splitlines())


def test_rsa_signs_with_rsa_sha2_512(tmp_path: Path, keys: dict) -> None:
    _, sig = _sign_ours(tmp_path, keys["rsa"])
    parsed = sshsig.parse_signature(sig.read_bytes())
    assert (parsed.sig_algorithm, parsed.hash_name, parsed.namespace) == ("rsa-sha2-512", "sha512", "runbook")


@pytest.mark.parametrize("kind", KEY_TYPES)
def test_ours_accepts_ssh_keygen_signature(tmp_path: Path, keys: dict, kind: str) -> None:
    data, sig = _sign_keygen(tmp_path, keys[kind])
    signers = allowed_signers(tmp_path / "as", "eng@site", Path(f"{keys[kind]}.pub")).read_text()
    check = sshsig.check_signature(DATA, sig.read_bytes(), allowed_signers=signers, identity="eng@site")
    assert check.ok and check.via_allowed_signers, check.message
    assert check.fingerprint == load_signer(str(keys[kind])).fingerprint
    bare = sshsig.check_signature(DATA, sig.read_bytes(), allowed_signers=None, identity=None)
    assert bare.ok and not bare.via_allowed_signers


def test_wrong_namespace_refused_by_both(tmp_path: Path, keys: dict) -> None:
    data, sig = _sign_keygen(tmp_path, keys["ed25519"], namespace="file")
    signers = allowed_signers(tmp_path / "as", "eng@site", Path(f"{keys['ed25519']}.pub"), options="")
    assert keygen_verify(data, sig, signers, "eng@site").returncode != 0
    for listed in (signers.read_text(), None):
        check = sshsig.check_signature(DATA, sig.read_bytes(), allowed_signers=listed, identity="eng@site")
        assert not check.ok and "namespace 'file'" in check.message


def test_allowed_signers_namespace_option_is_enforced_by_both(tmp_path: Path, keys: dict) -> None:
    data, sig = _sign_ours(tmp_path, keys["ed25519"])
    signers = allowed_signers(
        tmp_path / "as", "eng@site", Path(f"{keys['ed25519']}.pub"), options='namespaces="git,file"'
    )
    assert keygen_verify(data, sig, signers, "eng@site").returncode != 0
    check = sshsig.check_signature(
        DATA, sig.read_bytes(), allowed_signers=signers.read_text(), identity="eng@site"
    )
    assert not check.ok and "not allowed" in check.message


def test_wrong_identity_refused_by_both(tmp_path: Path, keys: dict) -> None:
    data, sig = _sign_ours(tmp_path, keys["ecdsa"])
    signers = allowed_signers(tmp_path / "as", "eng@site", Path(f"{keys['ecdsa']}.pub"))
    assert keygen_verify(data, sig, signers, "someone@else").returncode != 0
    check = sshsig.check_signature(
        DATA, sig.read_bytes(), allowed_signers=signers.read_text(), identity="someone@else"
    )
    assert not check.ok and "'someone@else'" in check.message


def test_wrong_key_refused_by_both(tmp_path: Path, keys: dict) -> None:
    data, sig = _sign_ours(tmp_path, keys["other"])
    signers = allowed_signers(tmp_path / "as", "eng@site", Path(f"{keys['ed25519']}.pub"))
    assert keygen_verify(data, sig, signers, "eng@site").returncode != 0
    check = sshsig.check_signature(
        DATA, sig.read_bytes(), allowed_signers=signers.read_text(), identity="eng@site"
    )
    assert not check.ok and "not allowed" in check.message


def test_changed_data_refused_by_both(tmp_path: Path, keys: dict) -> None:
    data, sig = _sign_ours(tmp_path, keys["rsa"])
    data.write_bytes(DATA.replace(b"runbook", b"runb00k"))
    signers = allowed_signers(tmp_path / "as", "eng@site", Path(f"{keys['rsa']}.pub"))
    assert keygen_verify(data, sig, signers, "eng@site").returncode != 0
    check = sshsig.check_signature(data.read_bytes(), sig.read_bytes(), allowed_signers=None, identity=None)
    assert not check.ok and "changed after signing" in check.message


def test_garbage_signature_is_a_clear_refusal() -> None:
    check = sshsig.check_signature(DATA, b"not a signature\n", allowed_signers=None, identity=None)
    assert not check.ok and "not an armored SSH signature" in check.message
