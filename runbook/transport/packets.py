"""Per-packet costs of asyncssh that buy nothing with the ciphers and the
keepalive we use.

1. asyncssh sends an empty SSH_MSG_IGNORE in front of every packet after the
   key exchange (asyncssh/connection.py `send_packet`). That is the old
   countermeasure for CBC mode, whose next IV is the last ciphertext block an
   observer has seen (a chosen-plaintext attack). An AEAD cipher (AES-GCM, which
   connect.py prefers, or chacha20-poly1305) has no chained IV, and OpenSSH sends
   no such packets. For us it doubled what a command sends: channel open, exec
   and close became six packets, each encrypted and written with its own send().
   `lighter_packets()` leaves them out on client connections whose send cipher
   is AEAD; with any other cipher asyncssh sends them as before.
2. asyncssh's GCM shim builds a new AESGCM object (key set-up) for every packet
   it encrypts or decrypts; the key only changes with a new key exchange, which
   makes a new cipher object. `_OneKeyGCM` keeps one per key: the same bytes,
   ~2 us less per packet.
3. With a keepalive interval set (transport.py: 15 s), every read from the
   socket cancels the keepalive timer and schedules a new one (a TimerHandle
   on the loop's heap, left there cancelled until its time comes). Here a read
   only notes its time; when the timer fires after data was heard, it is set
   again for `interval` after that: the keepalive goes out, and a silent server
   is given up, at the same moments as before.

Measured in bench/README.md ("Goal 1, branch client3").
"""

from __future__ import annotations

from asyncssh import encryption
from asyncssh.connection import SSHClientConnection, SSHConnection
from asyncssh.constants import MSG_IGNORE
from asyncssh.crypto.cipher import GCMCipher
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

_EMPTY = (b"\0\0\0\0",)  # String(b""): the payload of asyncssh's padding IGNORE


def is_padding_ignore(pkttype: int, args: tuple) -> bool:
    """The empty SSH_MSG_IGNORE asyncssh's send_packet puts before every packet
    (also what the simulator's nodes leave out: sim/lean_ssh.py)."""
    return pkttype == MSG_IGNORE and args == _EMPTY


_GCM_TAG = 16  # bytes of the GCM authentication tag
# Send ciphers without a chained IV (encryption.py's classes for AES-GCM and chacha20-poly1305).
_AEAD = tuple(c for c in (getattr(encryption, n, None) for n in ("GCMEncryption", "ChachaEncryption")) if c)

_done = False


class _OneKeyGCM(GCMCipher):
    """asyncssh's GCMCipher with its AESGCM built once (the IV handling is its own)."""

    def __init__(self, cipher_name: str, key: bytes, iv: bytes):
        super().__init__(cipher_name, key, iv)
        self._aead = AESGCM(key)

    def encrypt_and_sign(self, header: bytes, data: bytes) -> tuple[bytes, bytes]:
        data = self._aead.encrypt(self._iv, data, header)
        self._update_iv()
        return header + data[:-_GCM_TAG], data[-_GCM_TAG:]

    def verify_and_decrypt(self, header: bytes, data: bytes, mac: bytes) -> bytes | None:
        try:
            plain: bytes | None = self._aead.decrypt(self._iv, data + mac, header)
        except InvalidTag:
            plain = None
        self._update_iv()
        return plain


def lighter_packets() -> None:
    """Apply both, once per process (idempotent). These are asyncssh internals
    (pyproject allows any asyncssh >= 2.24): what an asyncssh does not have as
    expected is left as it is."""
    global _done
    if _done:
        return
    _done = True
    if getattr(encryption, "GCMCipher", None) is GCMCipher and all(
        hasattr(GCMCipher, m) for m in ("_update_iv", "encrypt_and_sign", "verify_and_decrypt")
    ):
        encryption.GCMCipher = _OneKeyGCM  # GCMEncryption.new() makes its cipher from this name
    send_packet = getattr(SSHClientConnection, "send_packet", None)
    if send_packet is None or not _AEAD:
        return

    def send_without_padding(self, pkttype: int, *args: bytes, handler=None) -> None:
        if is_padding_ignore(pkttype, args) and isinstance(getattr(self, "_send_encryption", None), _AEAD):
            return
        send_packet(self, pkttype, *args, handler=handler)

    send_without_padding.__doc__ = send_packet.__doc__
    SSHClientConnection.send_packet = send_without_padding
    _lazy_keepalive()


def _lazy_keepalive() -> None:
    fire = getattr(SSHConnection, "_keepalive_timer_callback", None)
    set_keepalive = getattr(SSHConnection, "set_keepalive", None)
    expected = ("_reset_keepalive_timer", "_set_keepalive_timer", "_cancel_keepalive_timer")
    if fire is None or set_keepalive is None or not all(hasattr(SSHConnection, m) for m in expected):
        return

    def reset_keepalive_timer(self) -> None:  # on every read
        if self._auth_complete:
            if self._keepalive_timer is None:
                self._set_keepalive_timer()
            else:
                self._runbook_heard = self._loop.time()

    def keepalive_timer_callback(self) -> None:
        heard = self.__dict__.pop("_runbook_heard", None)
        if heard is not None and self._keepalive_interval:
            due = heard + self._keepalive_interval
            if due > self._loop.time():  # the server spoke since the timer was set
                self._keepalive_timer = self._loop.call_at(due, self._keepalive_timer_callback)
                return
        fire(self)

    def set_keepalive_now(self, *args, **kwargs) -> None:
        # a new interval (or none) takes effect at once, as asyncssh's own reset does
        set_keepalive(self, *args, **kwargs)
        if self._auth_complete:
            self.__dict__.pop("_runbook_heard", None)
            self._cancel_keepalive_timer()
            self._set_keepalive_timer()

    set_keepalive_now.__doc__ = set_keepalive.__doc__
    SSHClientConnection._reset_keepalive_timer = reset_keepalive_timer
    SSHClientConnection._keepalive_timer_callback = keepalive_timer_callback
    SSHClientConnection.set_keepalive = set_keepalive_now
