"""Loading the signing key from a file: passphrases, the no-terminal case, clear errors."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from runbook.export import signing_keys
from runbook.export.signing_keys import SigningError, load_signer

from .conftest import PASSPHRASE

pytest.importorskip("bcrypt")  # asyncssh needs it to decrypt OpenSSH-format keys


@pytest.fixture(autouse=True)
def no_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)


def test_encrypted_key_asks_the_callback_once(keys: dict) -> None:
    asked: list[str] = []
    signer = load_signer(str(keys["encrypted"]), passphrase_cb=lambda p: asked.append(p) or PASSPHRASE)
    assert asked == [str(keys["encrypted"])]
    assert signer.fingerprint.startswith("SHA256:") and signer.source.startswith("file ")
    assert signer.sign(b"x").startswith(b"-----BEGIN SSH SIGNATURE-----")


def test_wrong_passphrase_three_times_is_refused(keys: dict) -> None:
    asked: list[str] = []
    with pytest.raises(SigningError, match="incorrect passphrase"):
        load_signer(str(keys["encrypted"]), passphrase_cb=lambda p: asked.append(p) or "nope")
    assert len(asked) == 3


def test_second_try_with_the_right_passphrase_works(keys: dict) -> None:
    answers = iter(["nope", PASSPHRASE])
    assert load_signer(str(keys["encrypted"]), passphrase_cb=lambda p: next(answers))


def test_no_terminal_gives_a_clear_error(keys: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    with pytest.raises(SigningError, match="no terminal to ask for its passphrase"):
        load_signer(str(keys["encrypted"]))


def test_terminal_prompt_uses_getpass(keys: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    prompts: list[str] = []
    monkeypatch.setattr(sys, "stdin", Tty(""))
    monkeypatch.setattr(signing_keys.getpass, "getpass", lambda prompt: prompts.append(prompt) or PASSPHRASE)
    assert load_signer(str(keys["encrypted"])).key_type == "ssh-ed25519"
    assert prompts == [f"Passphrase for {keys['encrypted']}: "]


def test_unencrypted_key_never_asks(keys: dict) -> None:
    def fail(path: str) -> str:
        raise AssertionError("asked for a passphrase")

    assert load_signer(str(keys["rsa"]), passphrase_cb=fail).key_type == "ssh-rsa"


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda keys, tmp: None, "no signing key"),
        (lambda keys, tmp: str(tmp / "missing"), "no such key file"),
        (lambda keys, tmp: f"{keys['ed25519']}.pub", "SSH_AUTH_SOCK is not set"),
        (lambda keys, tmp: (tmp / "junk").write_text("hello\n") and str(tmp / "junk"), "not a private key"),
    ],
)
def test_unusable_keys_are_clear_errors(keys: dict, tmp_path: Path, make, message: str) -> None:
    with pytest.raises(SigningError, match=message):
        load_signer(make(keys, tmp_path))
