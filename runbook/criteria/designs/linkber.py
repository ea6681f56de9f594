"""Link quality from `mlxlink -d DEV -c` per compute NIC (parser
mlxlink-per-device): each port Active with the designed FEC mode, its
effective (post-FEC) and raw (pre-FEC) BER at or under the design's limits,
and no symbol errors beyond link_symbol_errors_max. A port whose output has no
BER (mlxlink without -c, or an older MFT) cannot be judged: unknown."""

from __future__ import annotations

from typing import Any

from ..design import Comparator


def link_ber(record: Any, v: dict) -> list[str]:
    out = []
    ports = record["by_device"]
    for nic in v["compute_nics"]:
        dev = nic["dev"]
        where = f"{dev} (rail {nic['rail']})" if "rail" in nic else dev
        p = ports.get(dev)
        if p is None:
            out.append(f"{where}: no mlxlink output for it")
            continue
        if p.get("error"):
            out.append(f"{where}: {p['error']}")
            continue
        if p.get("state") != "Active":
            out.append(f"{where}: state {p.get('state')}, expected Active")
            continue
        fec = str(v.get("link_fec") or "")
        if fec and fec not in str(p.get("fec") or ""):
            out.append(f"{where}: FEC {p.get('fec')!r}, designed {fec}")
        for key, limit, label in (
            ("effective_ber", "link_effective_ber_max", "effective BER"),
            ("raw_ber", "link_raw_ber_max", "raw BER"),
        ):
            value = p.get(key)
            if value is None:
                raise ValueError(f"{where}: mlxlink printed no {label} (needs -c)")
            if value > float(v[limit]):
                out.append(f"{where}: {label} {value:.0E}, designed ≤ {float(v[limit]):.0E}")
        symbols = p.get("symbol_errors")
        if symbols is not None and symbols > int(v.get("link_symbol_errors_max", 0)):
            out.append(f"{where}: {symbols} symbol errors")
    return out


COMPARATORS = [
    Comparator(
        "link-ber",
        "host",
        link_ber,
        "each compute NIC's FEC, effective and raw BER and symbol errors as designed",
    )
]
