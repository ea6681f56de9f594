"""The subnet managers, judged together: each SM node answers for its own
OpenSM (`sminfo` to its own LID), exactly one is MASTER and it is the designed
node (sm_master), the others are STANDBY, each at its designed sm_priority.
Each node is judged against its designed role, with the fleet's picture in the
reason (a failed-over standby is not a fault of the standby, but the subnet is
not as designed, so it is named)."""

from __future__ import annotations

from typing import Any

from ...inventory.hostsel import fold
from ..design import Comparator


def _state(record: dict) -> str:
    if not record.get("sm_running"):
        return "no SM answering"
    return record.get("state_short") or "state not reported (old sminfo)"


def sm_master_standby(records: dict[str, Any], variables: dict[str, dict]) -> dict[str, list[str]]:
    states = {h: _state(r) for h, r in records.items()}
    masters = [h for h, s in states.items() if s == "MASTER"]
    out: dict[str, list[str]] = {}
    for host, record in records.items():
        v = variables[host]
        role = "MASTER" if host == v["sm_master"] else "STANDBY"
        problems = []
        if states[host] != role:
            where = f"MASTER is {fold(masters)}" if masters else "no node is MASTER"
            problems.append(
                f"{host}: expected {role}, found {states[host]} ({where}; designed master {v['sm_master']})"
            )
        elif role == "MASTER" and len(masters) > 1:
            problems.append(f"{len(masters)} masters in one subnet: {fold(masters)}")
        want = v.get("sm_priority")
        if want is not None and record.get("priority") is not None and int(record["priority"]) != int(want):
            problems.append(f"{host}: sm_priority {record['priority']}, designed {want}")
        out[host] = problems
    return out


def sm_subnet(record: Any, v: dict) -> list[str]:
    """The subnet's SMs as any node sees them (sm-survey): exactly one MASTER and
    at least one STANDBY, wherever they run (hosts, a managed switch, UFM); the
    master's port GUID as designed when the design names it (sm_master_guid)."""
    sms = record["sms"]
    if not sms:
        why = f" ({'; '.join(record['errors'])})" if record["errors"] else ""
        return [f"no subnet manager answers (saquery -s listed none or sminfo failed){why}"]
    masters = [s for s in sms if s["state_short"] == "MASTER"]
    standbys = [s for s in sms if s["state_short"] == "STANDBY"]
    seen = ", ".join(f"LID {s['sm_lid']} {s['state_short'] or '?'} (priority {s['priority']})" for s in sms)
    out = []
    if len(masters) != 1:
        out.append(f"expected exactly one MASTER, found {len(masters)}: {seen}")
    if not standbys:
        out.append(f"no STANDBY SM: the next failure of the master takes the subnet down ({seen})")
    want = v.get("sm_master_guid")
    if want and len(masters) == 1 and int(str(want), 16) != int(str(masters[0]["sm_guid"]), 16):
        out.append(f"MASTER is GUID {masters[0]['sm_guid']}, designed {want} (sm_master_guid)")
    return out


COMPARATORS = [
    Comparator(
        "sm-master-standby",
        "fleet",
        sm_master_standby,
        "one MASTER (sm_master), the other SM nodes STANDBY, at their sm_priority",
    ),
    Comparator(
        "sm-subnet",
        "host",
        sm_subnet,
        "as seen from a compute node: one MASTER and a STANDBY SM, wherever they run",
    ),
]
