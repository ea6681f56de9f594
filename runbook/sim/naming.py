"""Node names and loopback addresses of the simulated cluster."""

from __future__ import annotations

import ipaddress

LOOPBACK = ipaddress.ip_network("127.0.0.0/8")


def compute_names(count: int) -> list[str]:
    """gpu01..gpu48; zero-padded to max(2, digits of count): gpu0001..gpu1000."""
    width = max(2, len(str(count)))
    return [f"gpu{i:0{width}d}" for i in range(1, count + 1)]


def check_loopback(base: str) -> ipaddress.IPv4Address:
    try:
        addr = ipaddress.IPv4Address(base)
    except ValueError:
        raise ValueError(f"not an IPv4 address: {base!r}") from None
    if addr not in LOOPBACK:
        raise ValueError(f"{base} is not a loopback address (only 127.0.0.0/8 is allowed)")
    return addr


def addresses(base: str, count: int) -> list[str]:
    """count consecutive addresses after base (base+1 ...), all inside 127.0.0.0/8."""
    start = check_loopback(base)
    out = []
    for i in range(1, count + 1):
        addr = start + i
        if addr not in LOOPBACK or addr == LOOPBACK.broadcast_address:
            raise ValueError(f"{count} nodes do not fit in 127.0.0.0/8 after {base}")
        out.append(str(addr))
    return out


def storage_ip(subnet: str, index: int) -> tuple[str, int]:
    """The IPoIB storage address of node `index` (1-based) in `subnet`, and its prefix length."""
    net = ipaddress.ip_network(subnet, strict=False)
    return str(net.network_address + 256 + index), net.prefixlen
