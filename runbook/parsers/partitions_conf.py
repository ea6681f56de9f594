"""OpenSM `partitions.conf` (also what a managed switch SM prints for
`smpartition list active`).

Grammar, as OpenSM's own parser (osm_prtn_config.c) reads it:
    Name[=PKey][,flag[=value]]... : member[=full|limited|both], ... ;
- `#` starts a comment; a definition may span lines until its `;`.
- Only the low 15 bits of the PKey count: `pkey` is normalised to 0x%04x of
  them (Default=0xffff -> 0x7fff, 0x8001 -> 0x0001); `pkey_raw` is as written.
- A member without a flag gets the partition's `defmember` (default limited).
- `mgid=...` entries declare multicast groups and are kept apart.
- Repeated PKeys are merged into one partition, as OpenSM does.
GUIDs are normalised to 16 hex digits; one written with more digits than that
still reads as a number (OpenSM uses strtoull) but is reported in `warnings`.
"""

from __future__ import annotations

import re

from ._ib_common import guid, not_recognised
from .base import ParseError, Parser, Record

TOOL = "partitions-conf"
_KEYWORDS = {"ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF", "NONE"}
_MEMBERSHIPS = ("full", "limited", "both")


def _statements(text: str) -> tuple[list[tuple[int, str]], list[str]]:
    """(first line number, statement text) for each `;`-terminated statement."""
    statements, comments = [], []
    pending, start = "", None
    for lineno, raw in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        line = raw
        if "#" in line:
            line, comment = line.split("#", 1)
            comments.append(comment.strip())
        while line.strip():
            if start is None:
                start = lineno
            head, sep, line = line.partition(";")
            pending += " " + head
            if not sep:
                break
            statements.append((start, pending.strip()))
            pending, start = "", None
    if pending.strip():
        raise ParseError(f"{TOOL}: line {start}: definition not terminated by ';': {pending.strip()[:60]!r}")
    return statements, comments


def _split_pair(token: str) -> tuple[str, str | None]:
    name, sep, value = token.partition("=")
    return name.strip(), (value.strip() if sep else None)


def _membership(flag: str | None, default: str) -> str:
    if flag is None:
        return default
    # OpenSM compares prefixes: "f" means full; anything unrecognised is limited
    for word in ("full", "both"):
        if flag and word.startswith(flag.lower()):
            return word
    return "limited"


def _value(text: str | None):
    if text is None:
        return True
    return int(text, 0) if re.fullmatch(r"0x[0-9a-fA-F]+|\d+", text) else text


def _member(lineno: int, token: str, default: str, warnings: list[str]) -> Record:
    name, flag = _split_pair(token)
    membership = _membership(flag, default)
    if name.upper() in _KEYWORDS:
        return {"guid": name.upper(), "membership": membership}
    digits = name[2:] if name.lower().startswith("0x") else None
    try:
        normalised = guid(name) if digits is not None else f"0x{int(name):016x}"
    except (ParseError, ValueError):
        raise ParseError(f"{TOOL}: line {lineno}: bad PortGUID {name!r}") from None
    if digits is not None and len(digits) > 16:
        warnings.append(f"line {lineno}: GUID {name} has {len(digits)} hex digits (read as {normalised})")
    return {"guid": normalised, "membership": membership}


def _definition(lineno: int, statement: str, warnings: list[str]) -> Record:
    head, sep, body = statement.partition(":")
    if not sep:
        raise ParseError(f"{TOOL}: line {lineno}: no ':' after the partition definition: {statement[:60]!r}")
    parts = head.split(",")
    name, pkey_text = _split_pair(parts[0])
    if pkey_text is None and name[:1].isdigit():  # "0x8001 : ..." is a PKey, not a name
        name, pkey_text = "", name
    pkey = None
    if pkey_text is not None:
        try:
            pkey = int(pkey_text, 0) & 0x7FFF
        except ValueError:
            raise ParseError(f"{TOOL}: line {lineno}: bad PKey {pkey_text!r}") from None
    flags: dict = {}
    for part in parts[1:]:
        flag, value = _split_pair(part)
        if not flag:
            raise ParseError(f"{TOOL}: line {lineno}: bad partition flags in {head.strip()!r}")
        flags[flag] = _value(value)
    defmember = str(flags.get("defmember", "limited"))
    members, mgroups = [], []
    entries = [e.strip() for e in body.split(",")]
    for i, entry in enumerate(entries):
        if not entry:
            continue
        if entry.split("=", 1)[0].strip() == "mgid":  # consumes the rest of the statement
            mgid = _split_pair(entry)[1]
            mgroups.append(
                {"mgid": mgid, "flags": {k: _value(v) for k, v in map(_split_pair, entries[i + 1 :]) if k}}
            )
            break
        members.append(_member(lineno, entry, defmember, warnings))
    return {
        "name": name,
        "pkey": None if pkey is None else f"0x{pkey:04x}",
        "pkey_raw": pkey_text,
        "flags": flags,
        "ipoib": "ipoib" in flags,
        "defmember": defmember,
        "members": [m for m in members if m["guid"] != "NONE"],
        "mgroups": mgroups,
        "line": lineno,
    }


def parse(text: str) -> Record:
    statements, comments = _statements(text)
    if not statements:
        raise not_recognised(TOOL, "'Name=0xPKEY[,flags] : GUID=full, ... ;' definitions", text)
    warnings: list[str] = []
    partitions: list[Record] = []
    by_pkey: dict[str, Record] = {}
    for lineno, statement in statements:
        part = _definition(lineno, statement, warnings)
        same = by_pkey.get(part["pkey"]) if part["pkey"] else None
        if same:  # OpenSM merges definitions that repeat a PKey; the first name wins
            same["members"].extend(part["members"])
            same["mgroups"].extend(part["mgroups"])
            same["flags"].update(part["flags"])
            same["ipoib"] = same["ipoib"] or part["ipoib"]
            continue
        partitions.append(part)
        if part["pkey"]:
            by_pkey[part["pkey"]] = part
    return {
        "partitions": partitions,
        "pkeys": [p["pkey"] for p in partitions if p["pkey"]],
        "by_pkey": by_pkey,
        "comments": comments,
        "warnings": warnings,
    }


PARSERS = [
    Parser(
        name="partitions-conf",
        reads="cat /etc/opensm/partitions.conf",
        func=parse,
        description="OpenSM partitions.conf: partitions with P_Key, flags and members",
    )
]
