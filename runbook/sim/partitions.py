"""What the simulated OpenSM reads from partitions.conf (the opensm doc's format:
`Name=PKey[,flags][,defmember=full|limited] : member[=full|limited], ... ;`).
Entries it cannot read are skipped, as OpenSM logs and skips them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache


@dataclass
class Partition:
    name: str
    pkey: int  # low 15 bits
    defmember: str = "limited"
    mtu: int = 4  # IBTA MTU code of the IPoIB broadcast group (`mtu=`; OpenSM's default 4 = 2048)
    members: list[tuple[str, str]] = field(default_factory=list)  # (guid hex or keyword, full|limited)


def _strip_comments(text: str) -> str:
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


@lru_cache(maxsize=64)
def parse(text: str) -> tuple[Partition, ...]:
    out: list[Partition] = []
    for entry in _strip_comments(text).split(";"):
        if not entry.strip():
            continue
        head, sep, body = entry.partition(":")
        if not sep:
            continue
        parts = [p.strip() for p in head.split(",")]
        name, _, pkey_text = parts[0].partition("=")
        defmember = "limited"
        mtu = 4
        for flag in parts[1:]:
            key, _, value = flag.partition("=")
            if key.strip() == "defmember" and value.strip() in ("full", "limited"):
                defmember = value.strip()
            if key.strip() == "mtu" and value.strip().isdigit():
                mtu = int(value.strip())
        try:
            pkey = int(pkey_text.strip(), 0) & 0x7FFF if pkey_text.strip() else None
        except ValueError:
            continue
        if pkey is None:
            continue
        part = Partition(name.strip(), pkey, defmember, mtu)
        # a second ':' (defmember given after the list head) is allowed by OpenSM
        if ":" in body:
            extra, _, body = body.partition(":")
            m = re.search(r"defmember\s*=\s*(full|limited)", extra)
            if m:
                part.defmember = m.group(1)
        for item in body.replace("\n", " ").split(","):
            item = item.strip()
            if not item:
                continue
            member, _, kind = item.partition("=")
            kind = kind.strip() if kind.strip() in ("full", "limited") else part.defmember
            member = member.strip()
            if member.lower().startswith("0x"):
                try:
                    member = f"0x{int(member, 16):016x}"
                except ValueError:
                    continue
            part.members.append((member, kind))
        existing = next((p for p in out if p.pkey == part.pkey), None)
        if existing:  # same PKey twice: OpenSM merges them
            existing.members.extend(part.members)
        else:
            out.append(part)
    return tuple(out)


_INDEX: dict[int, tuple[Partition, int, dict[str, list[str]]]] = {}


def _members(part: Partition) -> dict[str, list[str]]:
    """member -> memberships, built once per parsed partition (a linear scan of
    every member per port made each `cat pkeys` O(fabric) at 1,000 nodes)."""
    cached = _INDEX.get(id(part))
    if cached is None or cached[0] is not part or cached[1] != len(part.members):
        index: dict[str, list[str]] = {}
        for member, how in part.members:
            index.setdefault(member, []).append(how)
        cached = _INDEX[id(part)] = (part, len(part.members), index)
    return cached[2]


def pkey_table(partitions: tuple[Partition, ...] | None, guid: int, is_sm_port: bool) -> list[int]:
    """The PKey table OpenSM programs into one CA port (index 0 = default partition).
    `partitions` None means the file is missing: Default=0x7fff : ALL=full."""
    if partitions is None:
        return [0xFFFF]
    g = f"0x{guid:016x}"
    table: list[int] = []
    default = next((p for p in partitions if p.pkey == 0x7FFF), None)
    if default is None:
        table.append(0xFFFF if is_sm_port else 0x7FFF)
    ordered = ([default] if default else []) + [p for p in partitions if p.pkey != 0x7FFF]
    for part in ordered:
        kind = None
        index = _members(part)
        for member in (g, "ALL", "ALL_CAS") + (("SELF",) if is_sm_port else ()):
            for how in index.get(member, ()):
                kind = "full" if how == "full" or kind == "full" else how
        if part.pkey == 0x7FFF and is_sm_port:
            kind = "full"
        if kind:
            table.append(part.pkey | 0x8000 if kind == "full" else part.pkey)
    return table
