"""Find the engineer's signing key: a private key file (asking for its
passphrase when it is encrypted) or a key held by the running ssh-agent.

`--sign-key` accepts what `ssh-keygen -Y sign -f` accepts, plus two agent forms:
- PATH to a private key: when ssh-agent holds the same key, the agent signs
  (as ssh-keygen does); otherwise the file is loaded, asking for a passphrase;
- PATH to a public key (`id_ed25519.pub`): the agent must hold its private half;
- `agent`, or no key at all: the first key in the agent;
- `SHA256:...`: the agent key with that fingerprint.
"""

from __future__ import annotations

import asyncio
import getpass
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncssh
from asyncssh.public_key import decode_ssh_public_key

from runbook.errors import RunbookError

from . import sshsig

PassphraseCallback = Callable[[str], str | None]
_PASSPHRASE_TRIES = 3


class SigningError(RunbookError):
    """No usable signing key (exit code 2: an input problem, not a failed run)."""


@dataclass
class Signer:
    """A key ready to sign: `sign(data)` returns the armored SSHSIG bytes."""

    public_key: asyncssh.SSHKey
    comment: str
    source: str  # "file PATH" or "ssh-agent"
    _sign: Callable[[bytes], bytes]

    @property
    def fingerprint(self) -> str:
        return sshsig.fingerprint(self.public_key)

    @property
    def key_type(self) -> str:
        return self.public_key.get_algorithm()

    def sign(self, data: bytes) -> bytes:
        return self._sign(data)


def tty_passphrase(path: str) -> str:
    """Ask on the terminal; refuse clearly when there is none (CI, pipes)."""
    if not (sys.stdin and sys.stdin.isatty()):
        raise SigningError(
            f"{path}: the key is encrypted and there is no terminal to ask for "
            "its passphrase; add it to ssh-agent (ssh-add) and sign through the "
            "agent, e.g. --sign-key " + path + ".pub"
        )
    try:
        return getpass.getpass(f"Passphrase for {path}: ")
    except (EOFError, KeyboardInterrupt):
        raise SigningError(f"{path}: no passphrase given") from None


def load_signer(
    sign_key: str | None, *, passphrase_cb: PassphraseCallback | None = None, agent_path: str | None = None
) -> Signer:
    agent_path = agent_path or os.environ.get("SSH_AUTH_SOCK") or None
    if sign_key in (None, "", "agent") or str(sign_key).startswith("SHA256:"):
        want = sign_key if sign_key and sign_key.startswith("SHA256:") else None
        if not agent_path:
            raise SigningError(
                "no signing key: pass --sign-key KEYFILE, or start ssh-agent "
                "and ssh-add your key (SSH_AUTH_SOCK is not set)"
            )
        return _agent_signer(agent_path, fingerprint=want)
    path = Path(sign_key).expanduser()
    if not path.is_file():
        raise SigningError(f"{path}: no such key file")
    text = path.read_bytes()
    public = _as_public_key(text)
    if public is not None:  # a .pub file: the agent holds the private half
        if not agent_path:
            raise SigningError(
                f"{path} is a public key; its private key must be in ssh-agent, but SSH_AUTH_SOCK is not set"
            )
        return _agent_signer(agent_path, fingerprint=sshsig.fingerprint(public), named=str(path))
    pub_file = Path(str(path) + ".pub")
    if agent_path and pub_file.is_file():
        sibling = _as_public_key(pub_file.read_bytes())
        if sibling is not None:
            try:
                return _agent_signer(agent_path, fingerprint=sshsig.fingerprint(sibling), named=str(path))
            except SigningError:
                pass  # not in the agent (or no agent): load the file below
    return _file_signer(path, text, passphrase_cb or tty_passphrase)


def _as_public_key(text: bytes) -> asyncssh.SSHKey | None:
    """The key when `text` is a public key file (asyncssh would also read the
    public half out of a private key file, hence the PRIVATE KEY test)."""
    if b"PRIVATE KEY-----" in text.lstrip()[:80]:
        return None
    try:
        return asyncssh.import_public_key(text)
    except (asyncssh.KeyImportError, ValueError):
        return None


def _file_signer(path: Path, text: bytes, passphrase_cb: PassphraseCallback) -> Signer:
    key = _import_private(path, text, None)
    tries = 0
    while key is None:
        if tries == _PASSPHRASE_TRIES:
            raise SigningError(f"{path}: incorrect passphrase ({tries} tries)")
        tries += 1
        passphrase = passphrase_cb(str(path))
        if not passphrase:
            raise SigningError(f"{path}: the key is encrypted and no passphrase was given")
        key = _import_private(path, text, passphrase)
    public = key.convert_to_public()
    comment = key.get_comment() or ""
    return Signer(public, comment, f"file {path}", lambda data: sshsig.sign_with_key(key, data))


def _import_private(path: Path, text: bytes, passphrase: str | None) -> asyncssh.SSHKey | None:
    """The key, or None when a (correct) passphrase is needed."""
    try:
        return asyncssh.import_private_key(text, passphrase)
    except asyncssh.KeyEncryptionError as exc:
        if "bcrypt" in str(exc):
            raise SigningError(
                f"{path}: encrypted OpenSSH keys need the Python package "
                "'bcrypt' (pip install bcrypt), or sign through ssh-agent"
            ) from None
        return None  # incorrect passphrase
    except asyncssh.KeyImportError as exc:
        if passphrase is None and "Passphrase must be specified" in str(exc):
            return None
        raise SigningError(f"{path}: not a private key that can be read ({exc})") from None


def _agent_signer(agent_path: str, *, fingerprint: str | None, named: str = "") -> Signer:
    async def pick() -> Any:
        async with asyncssh.connect_agent(agent_path) as agent:
            keys = await agent.get_keys()
        for k in keys:
            pub = decode_ssh_public_key(k.public_data) if not k.has_cert else None
            if pub is not None and (fingerprint is None or sshsig.fingerprint(pub) == fingerprint):
                return k, pub
        return None, None

    try:
        keypair, public = run_coroutine(pick())
    except (OSError, ValueError) as exc:
        raise SigningError(f"cannot reach ssh-agent at {agent_path}: {exc}") from None
    if keypair is None:
        what = f"the key of {named} ({fingerprint})" if named else (fingerprint or "any key")
        raise SigningError(f"ssh-agent at {agent_path} does not hold {what}")
    comment = keypair.get_comment() or ""

    def sign(data: bytes) -> bytes:
        async def agent_sign() -> bytes:
            async with asyncssh.connect_agent(agent_path) as agent:
                if keypair.algorithm == b"ssh-rsa":  # never SHA-1 in a signature we make
                    flags = 4  # SSH_AGENT_RSA_SHA2_512
                else:
                    flags = 0
                return await agent.sign(keypair.public_data, sshsig.signed_data(data), flags)

        try:
            raw = run_coroutine(agent_sign())
        except (OSError, ValueError) as exc:
            raise SigningError(f"ssh-agent at {agent_path} refused to sign: {exc}") from None
        return sshsig.wrap_signature(keypair.public_data, raw)

    return Signer(public, comment, "ssh-agent", sign)


def run_coroutine(coro: Any) -> Any:
    """Run a coroutine from synchronous code, even when an event loop is
    already running in this thread (the TUI): then in a short-lived thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # handed back to the caller below
            box["error"] = exc

    t = threading.Thread(target=target, name="runbook-ssh-agent", daemon=True)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
