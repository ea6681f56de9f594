"""The subnet managers, judged together: each SM node answers for its own
OpenSM (`sminfo` to its own LID), exactly one is MASTER and it is the designed
node (sm_master), the others are STANDBY, each at its designed sm_priority.
Each node is judged against its designed role, with the fleet's picture in the
reason (a failed-over standby is not a fault of the standby, but the subnet is
not as designed, so it is named)."""
from __future__ import annotations

from typing import Any

from ..design import Comparator
from ...inventory.hostsel import fold


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
            problems.append(f"{host}: expected {role}, found {states[host]} ({where}; designed master {v['sm_master']})")
        elif role == "MASTER" and len(masters) > 1:
            problems.append(f"{len(masters)} masters in one subnet: {fold(masters)}")
        want = v.get("sm_priority")
        if want is not None and record.get("priority") is not None and int(record["priority"]) != int(want):
            problems.append(f"{host}: sm_priority {record['priority']}, designed {want}")
        out[host] = problems
    return out


COMPARATORS = [Comparator("sm-master-standby", "fleet", sm_master_standby,
                          "one MASTER (sm_master), the other SM nodes STANDBY, at their sm_priority")]
