"""`ibv_devinfo [-v]` (rdma-core / libibverbs).

Device names are whatever the RDMA subsystem calls them (mlx5_0, or
rocep1s0f0 with udev naming). `state` keeps the verbs name (PORT_ACTIVE) and
`state_num` its number; MTUs are bytes. Keys this parser does not know (the
-v extras) are kept as printed; flag lists under a key become a list.
"""

from __future__ import annotations

import re

from ._ib_common import bad_line, guid, not_recognised, number, numbered
from .base import ParseError, Parser, Record

TOOL = "ibv_devinfo"
_HCA = re.compile(r"^hca_id:\s*(\S+)$")
_PORT = re.compile(r"^port:\s*(\d+)$")
_KEY = re.compile(r"^([A-Za-z_][\w\[\] ]*?):\s*(.*)$")
_NUMBERED = re.compile(r"^(\S+)\s+\((\d+)\)$")  # "PORT_ACTIVE (4)", "4096 (5)"
_INT_KEYS = {
    "phys_port_cnt",
    "vendor_part_id",
    "sm_lid",
    "port_lid",
    "port_lmc",
    "lmc",
    "sm_sl",
    "gid_tbl_len",
    "pkey_tbl_len",
}


def _set(target: Record, key: str, value: str) -> None:
    if key in ("node_guid", "sys_image_guid"):
        target[key] = guid(value)
    elif key in _INT_KEYS and re.fullmatch(r"0x[0-9a-fA-F]+|\d+", value):
        target[key] = number(value)
    elif key in ("state", "phys_state", "transport") and (m := _NUMBERED.match(value)):
        target[key], target[key + "_num"] = m.group(1), int(m.group(2))
    elif key in ("max_mtu", "active_mtu") and (m := _NUMBERED.match(value)):
        target[key], target[key + "_code"] = int(m.group(1)), int(m.group(2))
    else:
        target[key] = value


def parse(text: str) -> Record:
    devices: list[Record] = []
    target: Record | None = None
    last_key: str | None = None
    for lineno, line in numbered(text):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped == "No IB devices found":
            return {"devices": [], "ports": [], "by_name": {}, "message": stripped}
        if m := _HCA.match(stripped):
            target = {"hca_id": m.group(1), "ports": {}}
            devices.append(target)
        elif not devices:
            raise not_recognised(TOOL, "'hca_id:' blocks", text)
        elif m := _PORT.match(stripped):
            target = {"port": int(m.group(1))}
            devices[-1]["ports"][m.group(1)] = target
        elif m := _KEY.match(stripped):
            last_key = m.group(1).strip()
            _set(target, last_key, m.group(2).strip())
        elif line[:1].isspace() and last_key and re.fullmatch(r"[\w\- ()]+", stripped):
            # -v prints capability flags one per line under their mask
            previous = target.get(last_key)
            target[last_key] = (previous if isinstance(previous, list) else [previous]) + [stripped]
        else:
            raise bad_line(TOOL, lineno, "'key: value' under an hca_id", line)
    if not devices:
        raise not_recognised(TOOL, "'hca_id:' blocks", text)
    flat = []
    for dev in devices:
        for number_, port in dev["ports"].items():
            if "state" not in port:
                raise ParseError(f"{TOOL}: {dev['hca_id']} port {number_} has no state line (truncated?)")
            flat.append({"hca_id": dev["hca_id"], **port})
    return {"devices": devices, "ports": flat, "by_name": {d["hca_id"]: d for d in devices}}


PARSERS = [
    Parser(
        name="ibv_devinfo",
        reads="ibv_devinfo [-v] [-d DEV]",
        func=parse,
        description="per RDMA device and port: firmware, GUIDs, port state, LIDs, MTU, link layer",
    )
]
