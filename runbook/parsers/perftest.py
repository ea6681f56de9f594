"""perftest bandwidth tests: `ib_write_bw`, `ib_read_bw`, `ib_send_bw`.

Rows are kept in the unit printed (`unit`: "MB/sec" or "Gb/sec"); the
`*_gbps` fields are always Gb/s. perftest's MB is 2^20 bytes and its Gb is
10^9 bits (perftest_parameters: format_factor 0x100000 vs 125000000), so
1 MB/sec = 0.008388608 Gb/s. `bw_*_gbps` come from the last row (the largest
message size of a sweep). `Link type` is printed as requested, not as
measured (`--force-link IB` on an Ethernet port still says IB): a LID of 0
in `local_lids` is the tell-tale of RoCE.
"""

from __future__ import annotations

import re

from ._ib_common import lines_of, not_recognised, number, tidy_number
from .base import ParseError, Parser, Record

_MB_TO_GB = 1048576 * 8 / 1e9
_TITLE = re.compile(r"^\s*(RDMA_Write|RDMA_Read|Send|Atomic)( Bidirectional)? BW Test\s*$")
_SETTING = re.compile(r"([A-Za-z][\w.* ]*?)\s*:\s*(\S+)")
_ADDRESS = re.compile(r"^\s*(local|remote) address: LID (0x[0-9a-fA-F]+|\d+)\b")
_COLUMNS = re.compile(
    r"^\s*#bytes\s+#iterations\s+BW peak\[(MB/sec|Gb/sec|MiB/sec)\]\s+"
    r"BW average\[\1\]\s+MsgRate\[Mpps\]"
)
# duration mode can glue peak and average together ("0.0011403.46"): split on the 2-decimal format
_GLUED = re.compile(r"^(\d+\.\d{2})(\d+\.\d{2})$")
_SETTING_KEYS = {
    "Device": "device",
    "Number of qps": "qps",
    "Transport type": "transport_type",
    "Connection type": "connection_type",
    "Mtu": "mtu",
    "Link type": "link_type",
    "TX depth": "tx_depth",
    "Using SRQ": "srq",
    "Dual-port": "dual_port",
    "rdma_cm QPs": "rdma_cm",
    "Data ex. method": "data_exchange",
    "CQ Moderation": "cq_moderation",
}


def _row(tokens: list[str]) -> Record | None:
    if len(tokens) == 4 and (m := _GLUED.match(tokens[2])):
        tokens = tokens[:2] + [m.group(1), m.group(2)] + tokens[3:]
    if len(tokens) != 5 or not tokens[0].isdigit():
        return None
    try:
        return {
            "bytes": int(tokens[0]),
            "iterations": int(tokens[1]),
            "bw_peak": float(tokens[2]),
            "bw_average": float(tokens[3]),
            "msg_rate": float(tokens[4]),
        }
    except ValueError:
        return None


def parse(text: str) -> Record:
    record: Record = {
        "test": None,
        "bidirectional": False,
        "rows": [],
        "unit": None,
        "local_lids": [],
        "remote_lids": [],
        **{k: None for k in _SETTING_KEYS.values()},
    }
    in_table = False
    # Each pattern is tried only on a line holding its fixed text ("BW Test",
    # "address:", "#bytes", ":"): the same matches, for a fifth of the regex work
    # (a 1,000-node run parses ~10,000 of these outputs).
    for raw in lines_of(text):
        line = raw.rstrip()
        if "BW Test" in line and (m := _TITLE.match(line)):
            record["test"], record["bidirectional"] = m.group(1), bool(m.group(2))
        elif "address:" in line and (m := _ADDRESS.match(line)):
            record[f"{m.group(1)}_lids"].append(number(m.group(2)))
        elif "#bytes" in line and (m := _COLUMNS.match(line)):
            record["unit"], in_table = m.group(1), True
        elif in_table and line.strip() and not line.strip().startswith("-"):
            row = _row(line.split())
            if row is None:
                raise ParseError(f"ib_write_bw: cannot read the result row {line.strip()!r}")
            record["rows"].append(row)
        elif in_table and line.strip().startswith("-"):
            in_table = False
        elif not in_table and ":" in line:
            for key, value in _SETTING.findall(line):
                if key.strip() in _SETTING_KEYS:
                    record[_SETTING_KEYS[key.strip()]] = int(value) if value.isdigit() else value
    if record["unit"] is None:
        raise not_recognised("ib_write_bw", "a perftest BW table ('#bytes #iterations BW peak[...]')", text)
    if not record["rows"]:
        raise ParseError("ib_write_bw: the result table has no rows (the test did not finish?)")
    if isinstance(record["mtu"], str) and (mtu := re.match(r"\d+", record["mtu"])):
        record["mtu"] = int(mtu.group())  # "4096[B]"
    factor = 1.0 if record["unit"] == "Gb/sec" else _MB_TO_GB
    last = record["rows"][-1]
    record["bw_average_gbps"] = tidy_number(round(last["bw_average"] * factor, 2))
    # duration mode (-D) measures no peak and prints 0.00: not a measurement of zero
    peak_measured = last["bw_peak"] > 0 or last["bw_average"] == 0
    record["bw_peak_gbps"] = tidy_number(round(last["bw_peak"] * factor, 2)) if peak_measured else None
    record["bw_average_max_gbps"] = tidy_number(
        round(max(r["bw_average"] for r in record["rows"]) * factor, 2)
    )
    return record


PARSERS = [
    Parser(
        name="ib_write_bw",
        reads="ib_write_bw / ib_read_bw / ib_send_bw (perftest)",
        func=parse,
        description="perftest bandwidth: test settings, per-size bandwidth rows, peak and average",
    )
]
