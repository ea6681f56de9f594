"""`runbook ...` with the SSH packets the client sends and receives counted by
message type, printed on stderr at exit (what a command costs in packets).

    PYTHONPATH=. python bench/ssh_packet_counts.py run --steps steps \
        --inventory LAB/inventory.yaml --state STATE --all --new-run --json >/dev/null

Types: 2 IGNORE, 90 CHANNEL_OPEN, 91 OPEN_CONFIRMATION, 93 WINDOW_ADJUST,
94 DATA, 95 EXTENDED_DATA, 96 EOF, 97 CLOSE, 98 REQUEST, 99 SUCCESS.
"""

from __future__ import annotations

import atexit
import collections
import sys

import asyncssh.connection
import asyncssh.packet

sent: collections.Counter = collections.Counter()
received: collections.Counter = collections.Counter()
_send = asyncssh.connection.SSHConnection.send_packet
_process = asyncssh.packet.SSHPacketHandler.process_packet


def _counting_send(self, pkttype, *args, handler=None):
    sent[pkttype] += 1
    return _send(self, pkttype, *args, handler=handler)


def _counting_process(self, pkttype, pktid, packet):
    received[pkttype] += 1
    return _process(self, pkttype, pktid, packet)


asyncssh.connection.SSHConnection.send_packet = _counting_send
asyncssh.packet.SSHPacketHandler.process_packet = _counting_process


@atexit.register
def _report() -> None:
    print(f"sent {dict(sorted(sent.items()))}", file=sys.stderr)
    print(f"received {dict(sorted(received.items()))}", file=sys.stderr)


if __name__ == "__main__":
    from runbook.cli.main import main

    sys.exit(main())
