"""ib_write_bw per compute link against the designed minimum
(ib_write_bw_min_gbps, a tolerance below the line rate ib_rate_gbps)."""

from __future__ import annotations

from typing import Any

from ..design import Comparator


def ib_write_bw(record: Any, v: dict) -> list[str]:
    minimum, line = float(v["ib_write_bw_min_gbps"]), v.get("ib_rate_gbps")
    runs = {r["device"]: r for r in record["runs"]}
    out = []
    for dev in v["compute_devices"]:
        r = runs.get(dev)
        if r is None:
            out.append(f"{dev}: no ib_write_bw result (the test did not run or could not connect)")
        elif r["bw_average_gbps"] is None:
            out.append(f"{dev}: no ib_write_bw result ({r['error']})")
        elif r["bw_average_gbps"] < minimum:
            rate = f", line rate {line} Gb/s" if line is not None else ""
            out.append(f"{dev}: {r['bw_average_gbps']:g} Gb/s, expected ≥ {minimum:g}{rate}")
    return out


COMPARATORS = [
    Comparator("ib-write-bw", "host", ib_write_bw, "every compute link at or above ib_write_bw_min_gbps")
]
