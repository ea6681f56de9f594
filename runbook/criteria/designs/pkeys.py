"""Partitions: the PKey plan in OpenSM's partitions.conf (SM nodes) and the
PKey tables the SM programmed into each port (compute nodes).

A port is a *full* member of a partition when its PKey table holds the PKey
with the top bit set (0x8100 for 0x100); a limited member (0x0100) can still
talk to full members, so "not a member" means neither."""

from __future__ import annotations

from typing import Any

from ...parsers import ParseError
from ...parsers.partitions_conf import parse as parse_partitions
from ..design import Comparator
from ._util import designed_nics, examples, missing_card, pkey_number, pkey_text

_KEYWORDS = {"ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS"}


def _memberships(pkeys: list[str]) -> dict[int, str]:
    out: dict[int, str] = {}
    for p in pkeys:
        n = int(p, 16)
        if n & 0x7FFF:
            if out.get(n & 0x7FFF) != "full":
                out[n & 0x7FFF] = "full" if n & 0x8000 else "limited"
    return out


def _index_of(record: Any, dev: str, index: int) -> str | None:
    """The PKey at one index of a device's port-1 table (from the grep's paths)."""
    for e in record.get("entries") or []:
        if e.get("device") == dev and str(e.get("port")) == "1" and e.get("index") == index:
            return e["value"]
    return None


def pkey_membership(record: Any, v: dict) -> list[str]:
    """What the SM programmed into each designed port: a full member of its own
    partition; no membership at all of the other one (a limited member can still
    talk to the other plane's full members); only a *limited* member of the
    default partition 0x7fff (a full member there reaches every port). A
    compute port's table must hold the compute PKey at the index NCCL is told
    to use (nccl_ib_pkey_index, NCCL_IB_PKEY)."""
    compute, storage = pkey_number(v["pkey_compute"]), pkey_number(v["pkey_storage"])
    nccl_index = v.get("nccl_ib_pkey_index")
    out = []
    for nic, role, dev, label in designed_nics(record, v):
        member, other = (compute, storage) if role == "compute" else (storage, compute)
        if dev is None:
            out.append(missing_card(label, nic))
            continue
        table = (record["by_device"].get(dev) or {}).get("1")
        if table is None:
            out.append(f"{label} port 1 ({role}): no PKey table in the output (port down or device missing?)")
            continue
        m = _memberships(table)
        shown = ", ".join(table)
        if m.get(member) != "full":
            found = f"a {m[member]} member" if member in m else "not a member"
            out.append(
                f"{label} ({role}): expected full member of 0x{member:04x}, found {found} (PKeys {shown})"
            )
        if other in m:
            out.append(
                f"{label} ({role}): can talk on the {'storage' if role == 'compute' else 'compute'} "
                f"partition: a {m[other]} member of 0x{other:04x}, expected none (PKeys {shown})"
            )
        if m.get(0x7FFF) == "full":
            out.append(
                f"{label} ({role}): a full member of the default partition 0x7fff, so it reaches every "
                f"port over it; expected limited (partitions.conf: Default=0x7fff : ALL=limited, SELF=full) "
                f"(PKeys {shown})"
            )
        if role == "compute" and nccl_index is not None:
            at = _index_of(record, dev, int(nccl_index))
            if at is not None and int(at, 16) != member | 0x8000:
                out.append(
                    f"{label}: PKey index {nccl_index} (NCCL_IB_PKEY) holds {at}, expected 0x{member | 0x8000:04x}: "
                    "NCCL would run on another partition"
                )
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
    default = live.get("0x7fff")
    if default is None or any(
        m["guid"] in _KEYWORDS and m["membership"] in ("full", "both") for m in default["members"]
    ):
        how = (
            "no Default rule: OpenSM makes every port a limited member"
            if default is None
            else "every port a full member of the default partition 0x7fff: compute and storage ports reach each other over it"
        )
        if default is not None:
            out.append(f"0x7fff ({default['name'] or 'Default'}): {how}; expected ALL=limited, SELF=full")
    if storage:
        have_full = _members(storage)[0]
        targets = [f"0x{int(str(g), 16):016x}" for g in v.get("storage_target_guids") or []]
        lost = [g for g in targets if g not in have_full]
        if lost:
            out.append(
                f"{storage['pkey']} ({storage['name']}): storage target port(s) not full members: "
                f"{examples(lost)}"
            )
        want_mtu = v.get("storage_ipoib_mtu")
        if want_mtu:
            code = {2044: 4, 4092: 5}.get(int(want_mtu))
            got = storage["flags"].get("mtu", 4)
            if code and str(got) != str(code):
                out.append(
                    f"{storage['pkey']} ({storage['name']}): IPoIB mtu={got}, expected mtu={code} "
                    f"(storage_ipoib_mtu {want_mtu})"
                )
    for part in (p for p in (compute, storage) if p):
        wide = sorted(m["guid"] for m in part["members"] if m["guid"] in _KEYWORDS)
        if wide:
            out.append(
                f"{part['pkey']} ({part['name']}): member {', '.join(wide)} makes every port a member "
                "(compute/storage separation lost)"
            )
    if compute and storage:
        both = sorted(_members(compute)[0] & _members(storage)[0])
        if both:
            out.append(
                f"{len(both)} port(s) full members of both {compute['pkey']} and {storage['pkey']}: "
                f"{examples(both)}"
            )
    return out


COMPARATORS = [
    Comparator(
        "pkey-membership",
        "host",
        pkey_membership,
        "compute ports full members of pkey_compute only, storage ports of pkey_storage only",
    ),
    Comparator(
        "partitions",
        "host",
        partitions,
        "partitions.conf as the design's partitions_conf: every partition, member and flag",
    ),
]
