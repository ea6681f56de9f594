"""`ip addr show [dev IFACE]` (iproute2): interfaces, their state and addresses.

Record:
  interfaces: {name: {index, flags: [...], up (UP flag), lower_up (LOWER_UP flag),
                      state ("UP" | "DOWN" | "UNKNOWN" ...), mtu, link_type
                      ("infiniband", "ether", ...), inet: ["10.20.1.1/16"],
                      inet6: [...]}}
  names: interface names in the order printed
A child interface is printed as `ib4.8200@ib4`; it is keyed by its own name
(`ib4.8200`) with `parent` set.
`ip -d` adds, for an IPoIB interface, ipoib: {pkey: "0x8200", mode: "datagram"}
(iproute2's details line "ipoib pkey  0x8200 mode  datagram umcast  0000 ...";
null without -d).
"""

from __future__ import annotations

import re

from ._hosttext import fail, lines_of
from .base import ParseError, Parser, Record

_HEAD = re.compile(
    r"^(?P<index>\d+):\s+(?P<name>[^:@\s]+)(?:@(?P<parent>[^:\s]+))?:\s+<(?P<flags>[^>]*)>(?P<rest>.*)$"
)
_LINK = re.compile(r"^\s+link/(?P<type>\S+)")
_INET = re.compile(r"^\s+(?P<family>inet6?)\s+(?P<addr>\S+)")
_IPOIB = re.compile(r"^\s+ipoib\s+pkey\s+(?P<pkey>0x[0-9a-fA-F]+)\s+mode\s+(?P<mode>\w+)")


def parse_ip_addr(text: str) -> Record:
    interfaces: dict[str, Record] = {}
    current: Record | None = None
    for line in lines_of(text):
        if not line.strip():
            continue
        if m := _HEAD.match(line):
            rest = m["rest"]
            mtu = re.search(r"\bmtu (\d+)", rest)
            state = re.search(r"\bstate (\S+)", rest)
            flags = [f for f in m["flags"].split(",") if f]
            current = {
                "index": int(m["index"]),
                "parent": m["parent"],
                "flags": flags,
                "up": "UP" in flags,
                "lower_up": "LOWER_UP" in flags,
                "state": state.group(1) if state else None,
                "mtu": int(mtu.group(1)) if mtu else None,
                "link_type": None,
                "inet": [],
                "inet6": [],
                "ipoib": None,
            }
            interfaces[m["name"]] = current
        elif current is None:
            fail("`ip addr` output starting '5: ib4: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu ...'", text)
        elif m := _LINK.match(line):
            current["link_type"] = m["type"]
        elif m := _INET.match(line):
            current[m["family"]].append(m["addr"])
        elif m := _IPOIB.match(line):
            current["ipoib"] = {"pkey": m["pkey"].lower(), "mode": m["mode"]}
        elif line.startswith((" ", "\t")):
            continue  # valid_lft / altname / link-netns continuation lines
        else:
            raise ParseError(f"ip addr: unexpected line {line.strip()[:80]!r}")
    if not interfaces:
        fail("`ip addr` output starting '5: ib4: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu ...'", text)
    return {"interfaces": interfaces, "names": list(interfaces)}


PARSERS = [
    Parser(
        name="ip-addr",
        reads="ip addr show [dev IFACE]",
        func=parse_ip_addr,
        description="interfaces with state, MTU, link type and IPv4/IPv6 addresses",
    )
]
