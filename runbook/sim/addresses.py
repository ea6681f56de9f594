"""Where a lab listens: the loopback addresses and port `runbook sim` picks.

- Default: node N on 127.77.0.N, port 2222. When that is taken (another lab
  runs), a free random 127.x.y.0 range is picked, then any free port, and
  `runbook sim` says so. An address or port given on the command line is used
  as given, or the start fails with a clear message.
- Where only 127.0.0.1 exists on the loopback interface (macOS: lo0 has no
  127.0.0.0/8 route), every node listens on 127.0.0.1 with its own port.
"""

from __future__ import annotations

import errno
import random
import socket
from collections.abc import Iterator

DEFAULT_BASE = "127.77.0.0"
DEFAULT_PORT = 2222
SINGLE = "127.0.0.1"


def loopback_aliases_work(probe: str = "127.77.0.1") -> bool:
    """Can we bind an address of 127.0.0.0/8 other than 127.0.0.1? (Linux: yes; macOS: no.)"""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((probe, 0))
        return True
    except OSError as exc:
        if exc.errno == errno.EADDRNOTAVAIL:
            return False
        raise
    finally:
        sock.close()


def candidates(base: str | None, port: int | None, tries: int = 4) -> Iterator[tuple[str, int]]:
    """(base address, port) to try in order. Explicit values: only those."""
    if base is not None or port is not None:
        yield base or DEFAULT_BASE, DEFAULT_PORT if port is None else port
        return
    yield DEFAULT_BASE, DEFAULT_PORT
    for _ in range(tries):
        yield f"127.{random.randint(100, 250)}.{random.randint(1, 250)}.0", DEFAULT_PORT
    yield f"127.{random.randint(100, 250)}.{random.randint(1, 250)}.0", 0


def in_use(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno == errno.EADDRINUSE


def describe(endpoints: list[tuple[str, int]]) -> str:
    """`127.77.0.1..127.77.0.50 port 2222`, or `127.0.0.1 ports 40001-40050 (one per node)`: the truth."""
    addrs = [a for a, _ in endpoints]
    ports = sorted({p for _, p in endpoints})
    where = addrs[0] if len(set(addrs)) == 1 else f"{addrs[0]}..{addrs[-1]}"
    if len(ports) == 1:
        return f"{where} port {ports[0]}"
    return f"{where} ports {ports[0]}-{ports[-1]} (one per node, see the ssh_config)"
