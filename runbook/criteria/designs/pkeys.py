"""Partitions: the PKey plan in OpenSM's partitions.conf (SM nodes) and the
PKey tables the SM programmed into each port (compute nodes).

A port is a *full* member of a partition when its PKey table holds the PKey
with the top bit set (0x8100 for 0x100); a limited member (0x0100) can still
talk to full members, so "not a member" means neither."""
from __future__ import annotations

from typing import Any

from ..design import Comparator
from ...parsers import ParseError
from ...parsers.partitions_conf import parse as parse_partitions
from ._util import examples, pkey_number, pkey_text

_KEYWORDS = {"ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS"}


def _memberships(pkeys: list[str]) -> dict[int, str]:
    out: dict[int, str] = {}
    for p in pkeys:
        n = int(p, 16)
        if n & 0x7FFF:
            if out.get(n & 0x7FFF) != "full":
                out[n & 0x7FFF] = "full" if n & 0x8000 else "limited"
    return out


def pkey_membership(record: Any, v: dict) -> list[str]:
    compute, storage = pkey_number(v["pkey_compute"]), pkey_number(v["pkey_storage"])
    plan = [(n["dev"], compute, storage, "compute") for n in v["compute_nics"]]
    plan += [(n["dev"], storage, compute, "storage") for n in v.get("storage_nics", [])]
    out = []
    for dev, member, other, role in plan:
        table = (record["by_device"].get(dev) or {}).get("1")
        if table is None:
            out.append(f"{dev} port 1 ({role}): no PKey table in the output (port down or device missing?)")
            continue
        m = _memberships(table)
        shown = ", ".join(table)
        if m.get(member) != "full":
            found = f"a {m[member]} member" if member in m else "not a member"
            out.append(f"{dev} ({role}): expected full member of 0x{member:04x}, found {found} (PKeys {shown})")
        if other in m:
            out.append(f"{dev} ({role}): expected no membership of 0x{other:04x}, found a {m[other]} member "
                       f"(PKeys {shown})")
    return out


def _members(part: dict) -> tuple[set[str], set[str]]:
    """(GUIDs that are full members, keyword members as 'ALL=full')."""
    full, keywords = set(), set()
    for m in part["members"]:
        if m["guid"] in _KEYWORDS or m["guid"] == "SELF":
            keywords.add(f"{m['guid']}={m['membership']}")
        elif m["membership"] in ("full", "both"):
            full.add(m["guid"])
    return full, keywords


def _plan(v: dict) -> dict:
    try:
        plan = parse_partitions(str(v["partitions_conf"]))
    except ParseError as exc:
        raise ValueError(f"the design's partitions_conf cannot be read: {exc}") from None
    for key in (v["pkey_compute"], v["pkey_storage"]):
        if pkey_text(key) not in plan["by_pkey"]:
            raise ValueError(f"the design's partitions_conf has no partition {key}")
    return plan


def partitions(record: Any, v: dict) -> list[str]:
    """partitions.conf against the design's copy (partitions_conf): every designed
    partition present with exactly its designed members and flags, nothing else,
    and the compute and storage partitions kept apart."""
    plan = _plan(v)
    live = record["by_pkey"]
    out = []
    for part in plan["partitions"]:
        if not part["pkey"]:
            continue
        label = f"{part['pkey']} ({part['name'] or 'unnamed'})"
        got = live.get(part["pkey"])
        if got is None:
            out.append(f"partition {label} missing from partitions.conf")
            continue
        want_full, want_kw = _members(part)
        have_full, have_kw = _members(got)
        missing, extra = sorted(want_full - have_full), sorted(have_full - want_full)
        if missing:
            out.append(f"{label}: {len(missing)} designed full member(s) missing: {examples(missing)}")
        if extra:
            out.append(f"{label}: {len(extra)} full member(s) not in the plan: {examples(extra)}")
        for kw in sorted(want_kw ^ have_kw):
            where = "missing" if kw in want_kw else "not in the plan"
            out.append(f"{label}: member {kw} {where}")
        if part["ipoib"] and not got["ipoib"]:
            out.append(f"{label}: no `ipoib` flag (its IPoIB interfaces need the broadcast group)")
    for key, got in live.items():
        if key not in plan["by_pkey"]:
            out.append(f"partition {key} ({got['name'] or 'unnamed'}) is not in the plan")
    compute, storage = live.get(pkey_text(v["pkey_compute"])), live.get(pkey_text(v["pkey_storage"]))
    for part in (p for p in (compute, storage) if p):
        wide = sorted(m["guid"] for m in part["members"] if m["guid"] in _KEYWORDS)
        if wide:
            out.append(f"{part['pkey']} ({part['name']}): member {', '.join(wide)} makes every port a member "
                       "(compute/storage separation lost)")
    if compute and storage:
        both = sorted(_members(compute)[0] & _members(storage)[0])
        if both:
            out.append(f"{len(both)} port(s) full members of both {compute['pkey']} and {storage['pkey']}: "
                       f"{examples(both)}")
    return out


COMPARATORS = [
    Comparator("pkey-membership", "host", pkey_membership,
               "compute ports full members of pkey_compute only, storage ports of pkey_storage only"),
    Comparator("partitions", "host", partitions,
               "partitions.conf as the design's partitions_conf: every partition, member and flag"),
]
