"""`python -m runbook.sim`, with its server connections sending no padding
SSH_MSG_IGNORE before each packet when the cipher is AEAD (asyncssh sends one
before every packet; OpenSSH's sshd sends none). For measuring what those
packets cost the client (bench/transport_cpu.py --sim-without-ignore); the
sim's outputs are the same."""

from __future__ import annotations

import sys
from pathlib import Path

from asyncssh import encryption
from asyncssh.connection import SSHServerConnection
from asyncssh.constants import MSG_IGNORE

_AEAD = (encryption.GCMEncryption, encryption.ChachaEncryption)
_send = SSHServerConnection.send_packet


def _send_without_padding(self, pkttype: int, *args: bytes, handler=None) -> None:
    if pkttype == MSG_IGNORE and args == (b"\0\0\0\0",) and isinstance(self._send_encryption, _AEAD):
        return
    _send(self, pkttype, *args, handler=handler)


SSHServerConnection.send_packet = _send_without_padding

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's runbook
    from runbook.sim.main import run_sim

    sys.exit(run_sim(sys.argv[1:]))
