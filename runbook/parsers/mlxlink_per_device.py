"""`mlxlink-per-device`: a loop that prints a marker line, then one
`mlxlink -d DEV -c` output, per device:

    for d in DEVS; do echo "### mlxlink -d $d"; mlxlink -d $d -c 2>&1; done

Each block is read by the `mlxlink` parser. Record:
  ports: [{device, state, physical_state, speed, width, fec, effective_ber,
           raw_ber, effective_errors, symbol_errors, symbol_ber, link_down_counter,
           error}]   in the order printed; `error` when the block is not mlxlink
  by_device: {dev: the same entry}
"""

from __future__ import annotations

import re

from . import mlxlink
from .base import ParseError, Parser, Record

_MARK = re.compile(r"^### mlxlink -d (\S+)\s*$", re.M)
_FIELDS = ("state", "physical_state", "speed", "width", "fec")
_BER = ("effective_ber", "raw_ber", "effective_errors", "symbol_errors", "symbol_ber", "link_down_counter")


def parse(text: str) -> Record:
    marks = list(_MARK.finditer(text))
    if not marks:
        raise ParseError(
            "mlxlink-per-device: no '### mlxlink -d DEV' marker line "
            "(the step's loop prints one before each device)"
        )
    ports = []
    for i, m in enumerate(marks):
        block = text[m.end() : marks[i + 1].start() if i + 1 < len(marks) else len(text)]
        entry: Record = {"device": m.group(1), "error": None}
        try:
            rec = mlxlink.parse_mlxlink(block)
        except ParseError as exc:
            entry["error"] = str(exc).splitlines()[0][:200]
            ports.append(entry)
            continue
        entry.update({k: rec.get(k) for k in _FIELDS})
        ber = rec.get("ber") or {}
        entry.update({k: ber.get(k) for k in _BER})
        ports.append(entry)
    return {"ports": ports, "by_device": {p["device"]: p for p in ports}}


PARSERS = [
    Parser(
        name="mlxlink-per-device",
        reads="mlxlink -d DEV -c, per device after a '### mlxlink -d DEV' line",
        func=parse,
        description="ports: state, speed, width, FEC and BER counters of each device",
    )
]
