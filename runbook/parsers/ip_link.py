"""`ip [-d] link show [dev IFACE]` and `ip [-d] addr show` (iproute2), with the IPoIB
details `-d` prints: the P_Key, mode and MTU an IPoIB child interface (`ib4.8200@ib4`)
must carry.

Record:
  interfaces: {name: {index, parent (the "@ib4" of a child | null), flags: [...], up, lower_up,
                      state, mtu, qdisc, link_mode ("DEFAULT" | "DORMANT" | null), qlen,
                      link_type ("infiniband" | "ether" | ...), address, broadcast,
                      altnames: [...], inet: [...], inet6: [...],
                      ipoib: {pkey ("0x8001"), pkey_int (0x8001 = 32769), full_member
                              (bit 15 of the P_Key), mode ("datagram" | "connected"),
                              umcast} | null (no `-d`, or not IPoIB),
                      port_guid ("0x248a070300a31964": the last 8 bytes of a 20-byte
                                 IPoIB address) | null,
                      broadcast_pkey ("0xffff": bytes 8-9 of the IPoIB broadcast address,
                                      the partition the interface joined) | null,
                      details: {promiscuity, minmtu, maxmtu, numtxqueues, numrxqueues, ...}
                               (the other `-d` words that come in "key value" pairs)}}
  names: the interface names in the order printed
"""

from __future__ import annotations

import re

from ._hosttext import fail, int_or_none, lines_of
from .base import ParseError, Parser, Record

_HEAD = re.compile(
    r"^(?P<index>\d+):\s+(?P<name>[^:@\s]+)(?:@(?P<parent>[^:\s]+))?:\s+<(?P<flags>[^>]*)>"
    r"(?P<rest>.*)$"
)
_LINK = re.compile(
    r"^link/(?P<type>\S+)(?:\s+(?P<addr>[0-9a-fA-F:]+))?(?:\s+brd\s+(?P<brd>[0-9a-fA-F:]+))?"
    r"(?P<rest>.*)$"
)
_IPOIB = re.compile(
    r"^ipoib\s+pkey\s+(?P<pkey>0x[0-9a-fA-F]+)\s+mode\s+(?P<mode>\w+)"
    r"(?:\s+umcast\s+(?P<umcast>\w+))?(?P<rest>.*)$"
)
_INET = re.compile(r"^(?P<family>inet6?)\s+(?P<addr>\S+)")


def _pairs(words: str) -> dict:
    """'promiscuity 0 minmtu 68 maxmtu 65520' -> {'promiscuity': 0, ...} (ints where they are)."""
    found: dict = {}
    tokens = words.split()
    i = 0
    while i + 1 < len(tokens):
        key, value = tokens[i], tokens[i + 1]
        if re.fullmatch(r"[a-z_]+", key):
            found[key] = int_or_none(value) if int_or_none(value) is not None else value
            i += 2
        else:
            i += 1
    return found


def _ib_address(addr: str | None, brd: str | None) -> tuple[str | None, str | None]:
    guid = pkey = None
    if addr and len(addr.split(":")) == 20:
        guid = "0x" + "".join(addr.split(":")[12:]).lower()
    if brd and len(brd.split(":")) == 20:
        pkey = "0x" + "".join(brd.split(":")[8:10]).lower()
    return guid, pkey


def parse_ip_link(text: str) -> Record:
    interfaces: dict[str, Record] = {}
    current: Record | None = None
    for line in lines_of(text):
        if not line.strip():
            continue
        if m := _HEAD.match(line.rstrip()):
            rest = m["rest"]
            flags = [f for f in m["flags"].split(",") if f]

            def word(key: str, rest: str = rest) -> str | None:
                found = re.search(rf"\b{key} (\S+)", rest)
                return found.group(1) if found else None

            current = {
                "index": int(m["index"]),
                "parent": m["parent"],
                "flags": flags,
                "up": "UP" in flags,
                "lower_up": "LOWER_UP" in flags,
                "state": word("state"),
                "mtu": int_or_none(word("mtu")),
                "qdisc": word("qdisc"),
                "link_mode": word("mode"),
                "qlen": int_or_none(word("qlen")),
                "link_type": None,
                "address": None,
                "broadcast": None,
                "altnames": [],
                "inet": [],
                "inet6": [],
                "ipoib": None,
                "port_guid": None,
                "broadcast_pkey": None,
                "details": {},
            }
            interfaces[m["name"]] = current
            continue
        if current is None:
            fail(
                "`ip link` / `ip addr` output starting '5: ib4: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu ...'",
                text,
            )
        if not line[:1].isspace():
            raise ParseError(f"ip-link: unexpected line {line.strip()[:80]!r}")
        s = line.strip()
        if m := _LINK.match(s):
            current.update(link_type=m["type"], address=m["addr"], broadcast=m["brd"])
            current["details"].update(_pairs(m["rest"]))
            if m["type"] == "infiniband":
                current["port_guid"], current["broadcast_pkey"] = _ib_address(m["addr"], m["brd"])
        elif m := _IPOIB.match(s):
            pkey = int(m["pkey"], 16)
            current["ipoib"] = {
                "pkey": m["pkey"].lower(),
                "pkey_int": pkey,
                "full_member": bool(pkey & 0x8000),
                "mode": m["mode"],
                "umcast": m["umcast"],
            }
            current["details"].update(_pairs(m["rest"]))
        elif s.startswith("altname "):
            current["altnames"].append(s.split()[1])
        elif m := _INET.match(s):
            current[m["family"]].append(m["addr"])
        # valid_lft lines, other -d detail lines (vf, bond, ...) are skipped
    if not interfaces:
        fail(
            "`ip link` / `ip addr` output starting '5: ib4: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu ...'", text
        )
    return {"interfaces": interfaces, "names": list(interfaces)}


PARSERS = [
    Parser(
        name="ip-link",
        reads="ip [-d] link show [dev IFACE] (also ip [-d] addr show)",
        func=parse_ip_link,
        description="interfaces: state, MTU, addresses, altnames; IPoIB P_Key, mode (datagram/"
        "connected), parent of a child interface",
    )
]
