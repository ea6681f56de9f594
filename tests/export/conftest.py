"""Keys made by the real ssh-keygen, and a helper to run `ssh-keygen -Y verify`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from runbook.export import export_run

from .snapshot_builder import small_snapshot

SSH_KEYGEN = shutil.which("ssh-keygen") or "/usr/bin/ssh-keygen"
PASSPHRASE = "correct horse"


def keygen(
    path: Path, key_type: str, bits: int | None = None, passphrase: str = "", comment: str = ""
) -> Path:
    cmd = [SSH_KEYGEN, "-q", "-t", key_type, "-N", passphrase, "-C", comment, "-f", str(path)]
    if bits:
        cmd[1:1] = ["-b", str(bits)]
    subprocess.run(cmd, check=True, timeout=60, capture_output=True)
    return path


@pytest.fixture(scope="session")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("keys")
    return {
        "ed25519": keygen(d / "id_ed25519", "ed25519", comment="alice@example.com"),
        "ecdsa": keygen(d / "id_ecdsa", "ecdsa", 256, comment="bob@example.com"),
        "rsa": keygen(d / "id_rsa", "rsa", 2048, comment="carol@example.com"),
        "encrypted": keygen(d / "id_enc", "ed25519", passphrase=PASSPHRASE, comment="dave"),
        "other": keygen(d / "id_other", "ed25519", comment="mallory@example.com"),
    }


def allowed_signers(path: Path, identity: str, pub: Path, options: str = 'namespaces="runbook"') -> Path:
    key = " ".join(pub.read_text().split()[:2])
    path.write_text(f"{identity} {options} {key}\n".replace("  ", " "))
    return path


def keygen_verify(
    log: Path, sig: Path, signers: Path, identity: str, namespace: str = "runbook"
) -> subprocess.CompletedProcess:
    with open(log, "rb") as data:
        return subprocess.run(
            [SSH_KEYGEN, "-Y", "verify", "-f", str(signers), "-I", identity, "-n", namespace, "-s", str(sig)],
            stdin=data,
            capture_output=True,
            text=True,
            timeout=30,
        )


@pytest.fixture
def exported(tmp_path: Path, keys: dict[str, Path]):
    """The small snapshot exported and signed with the ed25519 key as alice@example.com."""
    result = export_run(
        small_snapshot(),
        tmp_path / "signed" / "log.json",
        sign_key=str(keys["ed25519"]),
        identity="alice@example.com",
    )
    signers = allowed_signers(
        tmp_path / "signed" / "allowed_signers", "alice@example.com", Path(str(keys["ed25519"]) + ".pub")
    )
    return result, signers
