"""Per-device loops: `for d in DEVS; do TOOL -d $d ...; done` prints one tool
output after another. These parsers read the concatenation with the tool's own
parser and key the result by device, so a criterion can name the device that
differs and a rollback can restore each device's own value.

`mlxconfig-per-device` (mlxconfig -d DEV [-e] q PARAMS, repeated):
  the `mlxconfig` record, plus
  by_device: {dev: {PARAM: value in force}}   blocks of the same device merge
             (a loop over ports 1 and 2 of one card prints it twice)
  restore:   ["mlx5_0:LINK_TYPE_P1=2", ...]   every device's LINK_TYPE_P* value
             as a number, what `mlxconfig -y -d DEV set PARAM=N` writes back
`ib_write_bw-per-device` (one perftest client run per device):
  runs: [{device, bw_average_gbps, bw_peak_gbps, error}]   in the order run
  by_device: {dev: bw_average_gbps}
  A run that printed a header but no result keeps `error`; a device that
  printed nothing at all is simply absent (the criterion names it).
"""

from __future__ import annotations

import re

from . import mlxconfig, perftest
from ._hosttext import fail, lines_of
from .base import ParseError, Parser, Record

_NUMBER_IN_PARENS = re.compile(r"\((\d+)\)\s*$")


def parse_mlxconfig_per_device(text: str) -> Record:
    record = mlxconfig.parse(text)
    by_device: dict[str, dict[str, str]] = {}
    for dev in record["devices"]:
        if not dev.get("device"):
            raise ParseError(
                "mlxconfig-per-device: a block without a 'Device:' line "
                "(cannot tell which device it belongs to)"
            )
        by_device.setdefault(dev["device"], {}).update(dev["configurations"])
    restore = []
    for name, params in by_device.items():
        for param, value in params.items():
            if not param.startswith("LINK_TYPE_P"):
                continue
            m = _NUMBER_IN_PARENS.search(value) or re.fullmatch(r"(\d+)", value)
            if not m:
                raise ParseError(f"mlxconfig-per-device: {name} {param} value {value!r} has no number")
            restore.append(f"{name}:{param}={m.group(1)}")
    return {**record, "by_device": by_device, "restore": restore}


_TITLE = re.compile(r"^\s*(RDMA_Write|RDMA_Read|Send|Atomic)( Bidirectional)? BW Test\s*$")


def _chunks(text: str) -> list[str]:
    chunks: list[list[str]] = []
    for line in lines_of(text):
        if _TITLE.match(line):
            chunks.append([])
        if chunks:
            chunks[-1].append(line)
    return ["\n".join(c) for c in chunks]


def parse_ib_write_bw_per_device(text: str) -> Record:
    chunks = _chunks(text)
    if not chunks:
        fail("perftest output ('RDMA_Write BW Test' headers), one per device", text)
    runs = []
    for chunk in chunks:
        device = None
        m = re.search(r"(?:^|\s)Device\s*:\s*(\S+)", chunk, re.M)
        if m:
            device = m.group(1)
        try:
            r = perftest.parse(chunk)
            runs.append(
                {
                    "device": r.get("device", device),
                    "bw_average_gbps": r["bw_average_gbps"],
                    "bw_peak_gbps": r["bw_peak_gbps"],
                    "error": None,
                }
            )
        except ParseError as exc:
            runs.append({"device": device, "bw_average_gbps": None, "bw_peak_gbps": None, "error": str(exc)})
    if any(r["device"] is None for r in runs):
        raise ParseError(
            "ib_write_bw-per-device: a run without a 'Device :' line (cannot tell which link it measured)"
        )
    by_device = {r["device"]: r["bw_average_gbps"] for r in runs}
    return {"runs": runs, "by_device": by_device}


PARSERS = [
    Parser(
        name="mlxconfig-per-device",
        reads="for d in DEVS; do mlxconfig -d $d [-e] q PARAMS; done",
        func=parse_mlxconfig_per_device,
        keeps_indent=True,
        description="a mlxconfig query per device in one output, split by device",
    ),
    Parser(
        name="ib_write_bw-per-device",
        reads="for d in DEVS; do ib_write_bw -d $d ... HOST; done",
        func=parse_ib_write_bw_per_device,
        description="an ib_write_bw run per device in one output, split by device",
    ),
]
