"""`ibstat`: every compute port Active / LinkUp at the designed rate, with a
LID (a port the SM never configured has LID 0) and the same SM LID on every
compute port of the host (the fleet-wide SM LID is a `consistent:` check)."""
from __future__ import annotations

from typing import Any

from ..design import Comparator


def ib_ports(record: Any, v: dict) -> list[str]:
    rate = float(v["ib_rate_gbps"])
    cas = record["by_name"]
    out = []
    sm_lids: dict[str, Any] = {}
    for nic in v["compute_nics"]:
        dev = nic["dev"]
        port = (cas.get(dev) or {}).get("ports", {}).get("1")
        if port is None:
            out.append(f"{dev} port 1: not in the ibstat output (device missing?)")
            continue
        bad = []
        if port.get("state") != "Active":
            bad.append(f"state {port.get('state')}, expected Active")
        if port.get("physical_state") != "LinkUp":
            bad.append(f"physical state {port.get('physical_state')}, expected LinkUp")
        if port.get("rate") is None or float(port["rate"]) != rate:
            bad.append(f"rate {port.get('rate')}, expected {rate:g}")
        if port.get("link_layer") not in (None, "InfiniBand"):
            bad.append(f"link layer {port['link_layer']}, expected InfiniBand")
        if not port.get("base_lid"):
            bad.append("LID 0 (the SM never configured this port)")
        if not port.get("sm_lid"):
            bad.append("SM LID 0 (no subnet manager seen)")
        else:
            sm_lids[dev] = port["sm_lid"]
        if bad:
            out.append(f"{dev} port 1: " + ", ".join(bad))
    if len(set(sm_lids.values())) > 1:
        seen = ", ".join(f"{d} {lid}" for d, lid in sm_lids.items())
        out.append(f"compute ports see different SM LIDs ({seen}): expected one subnet manager")
    return out


COMPARATORS = [Comparator("ib-ports", "host", ib_ports,
                          "compute ports Active/LinkUp at ib_rate_gbps with a LID and one SM LID")]
