"""Two of asyncssh's per-packet costs the simulator's server connections skip.

1. asyncssh puts an empty SSH_MSG_IGNORE before every packet it sends once
   the connection is encrypted (connection.py `send_packet`): a command's
   five packets (channel open confirmation, exec reply, data, exit status,
   close) went out as ten, each padded with os.urandom, encrypted and
   logged, and the client decrypted and dispatched ten. An sshd sends none
   (RFC 4253 11.2: "No implementation is required to send them"), so a
   simulated node without them is closer to a real one; what the client
   reads on its channels is the same.
2. asyncssh describes every packet for its log before asking whether the
   log wants it (runbook/transport/quiet_log.py: the client's copy of the
   fix, which this process shares).
3. asyncssh makes a new AES-GCM object for every packet; one per key does
   (runbook/transport/packets.py lighter_packets, applied here explicitly: the
   transport applies it when it is imported, and the simulator imports only
   some of the transport's modules).

All are asyncssh internals: an asyncssh without them is left as it is,
slower, never wrong.
"""

from __future__ import annotations

from ..transport.packets import is_padding_ignore, lighter_packets
from ..transport.quiet_log import skip_unwanted_messages


def lean(conn) -> None:
    """Make one server connection send no empty SSH_MSG_IGNORE packets.

    asyncssh's send_packet asks `self.send_packet` for the ignore packet it
    inserts, so an instance attribute catches it; connections of clients in
    the same process (tests) are not touched."""
    skip_unwanted_messages()
    lighter_packets()
    send = getattr(type(conn), "send_packet", None)
    if send is None or "send_packet" in vars(conn):
        return

    def send_packet(pkttype: int, *args: bytes, handler=None) -> None:
        if is_padding_ignore(pkttype, args):
            return
        send(conn, pkttype, *args, handler=handler)

    conn.send_packet = send_packet
