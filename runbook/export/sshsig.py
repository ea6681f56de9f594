"""OpenSSH SSHSIG signatures (PROTOCOL.sshsig), namespace `runbook`.

Signing with a key file goes through asyncssh's `create_sshsig`; signing
through ssh-agent builds the same blob here, because asyncssh's agent keys can
only sign asynchronously. Verification parses the blob first, so that it can
refuse what `ssh-keygen -Y verify -n runbook` refuses and asyncssh's
`validate_sshsig` alone would not (another namespace, RSA with SHA-1), and
then lets `validate_sshsig` check the signature and the allowed_signers entry.
"""

from __future__ import annotations

import binascii
import hashlib
from dataclasses import dataclass

import asyncssh
from asyncssh.packet import PacketDecodeError, SSHPacket, String, UInt32
from asyncssh.public_key import decode_ssh_certificate, decode_ssh_public_key

NAMESPACE = "runbook"
HASH_NAME = "sha512"  # what ssh-keygen -Y sign uses
_MAGIC = b"SSHSIG"
_VERSION = 1
_BEGIN = b"-----BEGIN SSH SIGNATURE-----"
_END = b"-----END SSH SIGNATURE-----"
_WRAP = 70  # ssh-keygen's line length


class SignatureFormatError(ValueError):
    """The bytes are not an armored SSHSIG signature."""


@dataclass(frozen=True)
class ParsedSignature:
    public_key: asyncssh.SSHKey
    namespace: str
    hash_name: str
    sig_algorithm: str  # e.g. ssh-ed25519, rsa-sha2-512

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_key)


@dataclass(frozen=True)
class SignatureCheck:
    ok: bool
    message: str  # what was proven, or why not
    fingerprint: str = ""
    key_type: str = ""
    identity: str | None = None
    via_allowed_signers: bool = False


def fingerprint(key: asyncssh.SSHKey) -> str:
    return key.get_fingerprint("sha256")


def public_key_line(key: asyncssh.SSHKey) -> str:
    """`ssh-ed25519 AAAA...` without a comment."""
    algorithm, blob = key.export_public_key("openssh").decode().split()[:2]
    return f"{algorithm} {blob}"


def allowed_signers_line(identity: str, key: asyncssh.SSHKey) -> str:
    """One line of an ssh-keygen allowed_signers file for this signer."""
    return f'{identity} namespaces="{NAMESPACE}" {public_key_line(key)}'


def armor(blob: bytes) -> bytes:
    b64 = binascii.b2a_base64(blob, newline=False)
    lines = [b64[i : i + _WRAP] for i in range(0, len(b64), _WRAP)]
    return b"\n".join([_BEGIN, *lines, _END]) + b"\n"


def dearmor(text: bytes) -> bytes:
    lines = [ln.strip() for ln in text.strip().splitlines()]
    if len(lines) < 3 or lines[0] != _BEGIN or lines[-1] != _END:
        raise SignatureFormatError(
            "not an armored SSH signature (-----BEGIN SSH SIGNATURE----- ... -----END SSH SIGNATURE-----)"
        )
    try:
        return binascii.a2b_base64(b"".join(lines[1:-1]))
    except binascii.Error as exc:
        raise SignatureFormatError(f"bad base64 in the signature: {exc}") from None


def signed_data(data: bytes, namespace: str = NAMESPACE, hash_name: str = HASH_NAME) -> bytes:
    """The blob a key actually signs: magic, namespace, reserved, hash name, H(data)."""
    digest = hashlib.new(hash_name, data).digest()
    return _MAGIC + String(namespace) + String(b"") + String(hash_name) + String(digest)


def wrap_signature(
    public_data: bytes, ssh_signature: bytes, namespace: str = NAMESPACE, hash_name: str = HASH_NAME
) -> bytes:
    """The armored SSHSIG around a raw SSH signature made over `signed_data`."""
    blob = (
        _MAGIC
        + UInt32(_VERSION)
        + String(public_data)
        + String(namespace)
        + String(b"")
        + String(hash_name)
        + String(ssh_signature)
    )
    return armor(blob)


def sign_with_key(key: asyncssh.SSHKey, data: bytes) -> bytes:
    """Sign with a private key loaded in memory (RSA uses rsa-sha2-512)."""
    raw = asyncssh.create_sshsig(key, data, namespace=NAMESPACE, hash_name=HASH_NAME, raw=True)
    return armor(raw)


def parse_signature(text: bytes) -> ParsedSignature:
    packet = SSHPacket(dearmor(text))
    try:
        if packet.get_bytes(6) != _MAGIC:
            raise SignatureFormatError("the signature does not start with SSHSIG")
        version = packet.get_uint32()
        if version != _VERSION:
            raise SignatureFormatError(f"SSHSIG version {version} is not supported")
        public_data = packet.get_string()
        namespace = packet.get_string().decode("utf-8", "replace")
        packet.get_string()  # reserved
        hash_name = packet.get_string().decode("ascii", "replace")
        inner = SSHPacket(packet.get_string())
        packet.check_end()
        sig_algorithm = inner.get_string().decode("ascii", "replace")
    except PacketDecodeError as exc:
        raise SignatureFormatError(f"truncated or malformed SSHSIG blob: {exc}") from None
    try:
        key = decode_ssh_public_key(public_data)
    except asyncssh.KeyImportError:
        try:
            key = decode_ssh_certificate(public_data).key
        except asyncssh.KeyImportError as exc:
            raise SignatureFormatError(f"unreadable public key in the signature: {exc}") from None
    return ParsedSignature(key, namespace, hash_name, sig_algorithm)


def check_signature(
    data: bytes, sig_text: bytes, *, allowed_signers: str | None, identity: str | None
) -> SignatureCheck:
    """Check `sig_text` over `data` as `ssh-keygen -Y verify -n runbook` does.

    With `allowed_signers` (the file's text), the key must be listed for
    `identity` with the namespace allowed. Without it, only the key embedded in
    the signature is checked, which proves integrity but not who that key is.
    Raises ValueError when allowed_signers has no usable entry (an input error).
    """
    try:
        parsed = parse_signature(sig_text)
    except SignatureFormatError as exc:
        return SignatureCheck(False, f"signature: {exc}")
    fp, key_type = parsed.fingerprint, parsed.public_key.get_algorithm()

    def fail(msg: str) -> SignatureCheck:
        return SignatureCheck(False, f"signature: {msg}", fp, key_type, identity)

    if parsed.namespace != NAMESPACE:
        return fail(f"made for namespace {parsed.namespace!r}, not {NAMESPACE!r}")
    if parsed.hash_name not in ("sha256", "sha512"):
        return fail(f"hash {parsed.hash_name!r} is not allowed")
    if parsed.sig_algorithm == "ssh-rsa":
        return fail("RSA signature with SHA-1 (ssh-rsa) is refused; sign with rsa-sha2-512")
    if allowed_signers is None:
        anyone = f'* namespaces="{NAMESPACE}" {public_key_line(parsed.public_key)}'
        if not asyncssh.validate_sshsig(data, sig_text, "*", anyone.encode()):
            return fail(
                f"does not match the log (key {fp}): the log was changed after "
                "signing, or the signature belongs to another file"
            )
        return SignatureCheck(True, f"valid signature by key {fp} ({key_type})", fp, key_type)
    principal = identity or ""
    signers = asyncssh.import_allowed_signers(allowed_signers)  # ValueError: no entries
    if asyncssh.validate_sshsig(data, sig_text, principal, signers):
        return SignatureCheck(
            True,
            f"valid signature by {principal} (key {fp}, {key_type}), listed in allowed_signers",
            fp,
            key_type,
            principal,
            True,
        )
    anyone = f'* namespaces="{NAMESPACE}" {public_key_line(parsed.public_key)}'
    if not asyncssh.validate_sshsig(data, sig_text, "*", anyone.encode()):
        return fail(
            f"does not match the log (key {fp}): the log was changed after "
            "signing, or the signature belongs to another file"
        )
    return fail(
        f"key {fp} is not allowed in allowed_signers for identity {principal!r} and namespace {NAMESPACE!r}"
    )
