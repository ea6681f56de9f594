"""SSH keys of the lab: one ed25519 host key per node (plus a second one for
host_key_changed), and the client key. Cached in DIR/keys so a restarted sim
presents the same host keys and existing known_hosts files stay valid."""

from __future__ import annotations

import os
from pathlib import Path

import asyncssh


def _load_or_make(path: Path) -> asyncssh.SSHKey:
    try:
        return asyncssh.import_private_key(path.read_bytes())
    except (OSError, asyncssh.KeyImportError):
        key = asyncssh.generate_private_key("ssh-ed25519")
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(key.export_private_key())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
        return key


def host_keys(directory: Path, names: list[str]) -> dict[str, asyncssh.SSHKey]:
    keydir = directory / "keys"
    keydir.mkdir(parents=True, exist_ok=True)
    return {name: _load_or_make(keydir / name) for name in names}


def changed_key(directory: Path, name: str) -> asyncssh.SSHKey:
    """The key a reinstalled node presents (host_key_changed)."""
    return _load_or_make(directory / "keys" / f"{name}.reinstalled")


def client_key(directory: Path) -> tuple[Path, asyncssh.SSHKey]:
    path = directory / "id_ed25519"
    key = _load_or_make(path)
    os.chmod(path, 0o600)
    pub = directory / "id_ed25519.pub"
    pub.write_bytes(key.export_public_key())
    return path, key
