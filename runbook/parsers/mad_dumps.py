"""MAD query dumps from infiniband-diags: `perfquery`, `smpquery portinfo`,
`smpquery pkeys` and `saquery`.

saquery record: records [{type ("NodeRecord", "SMInfoRecord", ...), every dotted field
(GUIDs normalised)}], count, the single record's fields at the top level when there is one,
sm_records [{lid, guid, act_count, priority, state (0-3), state_name ("NOTACTIVE" |
"DISCOVERING" | "STANDBY" | "MASTER")}] from `saquery SMIR` (SMInfoRecords), master (the
MASTER one | null); sm_ports / sm_disabled_ports [{lid, port, master_sm_lid, capability_mask,
section ("IsSM" | "IsSMdisabled" | null: no headings, judged by the mask), is_sm,
sm_disabled}] from `saquery -s` (PortInfoRecords under "IsSM ports" / "IsSMdisabled ports";
a switch's SM is on its port 0).

The first three print dotted fields ("LinkState:.......Active"; saquery
without the colon). Field names are kept as the tool prints them and copied
flat at the top level; a few normalised keys are added per tool.
"""

from __future__ import annotations

import re

from ._ib_common import (
    bad_line,
    guid,
    lane_from_signal,
    link_rate,
    maybe_int,
    not_recognised,
    numbered,
    width_lanes,
)
from .base import Parser, Record

_DOTTED = re.compile(r"^([A-Za-z][\w\[\]]*(?: [\w\[\]]+)*?):?\.{2,}(.*)$")
_HEADER = re.compile(r"^#\s*([A-Za-z][\w ]*?):\s*(.*)$")
_RECORD = re.compile(r"^(\w+Record) dump:$")
ERROR_COUNTERS = (
    "SymbolErrorCounter",
    "LinkErrorRecoveryCounter",
    "LinkDownedCounter",
    "PortRcvErrors",
    "PortRcvRemotePhysicalErrors",
    "PortRcvSwitchRelayErrors",
    "PortXmitDiscards",
    "PortXmitConstraintErrors",
    "PortRcvConstraintErrors",
    "LocalLinkIntegrityErrors",
    "ExcessiveBufferOverrunErrors",
    "VL15Dropped",
)


# Sub-headers inside a saquery record: "RID" and "SMInfo dump:" (SMInfoRecord), "PortInfo dump:".
_SUBHEADER = re.compile(r"^(?:RID|\w+ dump:)$")


def _blocks(tool: str, text: str, header_re: re.Pattern, skip: re.Pattern | None = None) -> list[Record]:
    """Dotted fields grouped under their '# ...' / 'XRecord dump:' headers."""
    blocks: list[Record] = []
    last_key = None
    for lineno, line in numbered(text):
        s = line.strip()
        if not s or s.startswith("ibwarn"):
            continue
        if skip is not None and blocks and skip.match(s) and not header_re.match(s):
            continue
        if m := header_re.match(s):
            blocks.append(
                {
                    "header": m.group(1),
                    "header_rest": m.group(2) if m.lastindex > 1 else "",
                    "fields": {},
                    "details": {},
                }
            )
            last_key = None
        elif m := _DOTTED.match(s):
            if not blocks:
                blocks.append({"header": None, "header_rest": "", "fields": {}, "details": {}})
            last_key = m.group(1)
            blocks[-1]["fields"][last_key] = maybe_int(m.group(2))
        elif last_key and line[:1].isspace() and re.fullmatch(r"[\w\- ]+", s):
            # e.g. the capability names smpquery lists under CapMask
            blocks[-1]["details"].setdefault(last_key, []).append(s)
        else:
            if not blocks:
                raise not_recognised(tool, "dotted 'Field:......value' lines", text)
            raise bad_line(tool, lineno, "a dotted 'Field:......value' line", line)
    if not blocks:
        raise not_recognised(tool, "dotted 'Field:......value' lines", text)
    return blocks


def _lid_port(rest: str) -> tuple[int | None, int | str | None, str | None]:
    lid = re.search(r"\bLid (\d+)", rest)
    port = re.search(r"\bport (\w+)", rest)
    cap = re.search(r"CapMask:\s*(0x[0-9A-Fa-f]+)", rest)
    return (
        int(lid.group(1)) if lid else None,
        maybe_int(port.group(1)) if port else None,
        cap.group(1) if cap else None,
    )


def parse_perfquery(text: str) -> Record:
    blocks = _blocks("perfquery", text, _HEADER)
    out_blocks = []
    for b in blocks:
        counters = b["fields"]
        if b["header"] is None and not any("Counter" in k or k.startswith("Port") for k in counters):
            raise not_recognised("perfquery", "'# Port counters: Lid N port N' and counter fields", text)
        lid, port, cap = _lid_port(b["header_rest"])
        present = [counters[k] for k in ERROR_COUNTERS if isinstance(counters.get(k), int)]
        out_blocks.append(
            {
                "kind": b["header"],
                "lid": lid,
                "port": port,
                "capmask": cap,
                "counters": counters,
                "errors_total": sum(present),
            }
        )
    record: Record = {**out_blocks[0], "blocks": out_blocks}
    for key, value in out_blocks[0]["counters"].items():
        record.setdefault(key, value)
    return record


_PORTINFO_KEYS = ("LinkState", "PhysLinkState", "LinkWidthActive", "LinkSpeedActive", "SMLid", "Lid")


def parse_portinfo(text: str) -> Record:
    blocks = _blocks("smpquery-portinfo", text, _HEADER)
    fields = {k: v for b in blocks for k, v in b["fields"].items()}
    if not any(k in fields for k in _PORTINFO_KEYS):
        raise not_recognised("smpquery-portinfo", "PortInfo fields (LinkState, PhysLinkState, ...)", text)
    lid, port, _ = _lid_port(blocks[0]["header_rest"])
    speed = fields.get("LinkSpeedActive")
    ext = fields.get("LinkSpeedExtActive")
    if isinstance(ext, str) and "Gbps" in ext:  # FDR and faster report the extended speed
        speed = ext
    lane, generation = lane_from_signal(speed if isinstance(speed, str) else None)
    width = fields.get("LinkWidthActive")
    record: Record = {
        "query_lid": lid,
        "query_port": port,
        "lid": fields.get("Lid"),
        "sm_lid": fields.get("SMLid"),
        "state": fields.get("LinkState"),
        "phys_state": fields.get("PhysLinkState"),
        "width": width,
        "speed": speed,
        "generation": generation,
        "rate": link_rate(width_lanes(width if isinstance(width, str) else None), lane),
        "fields": fields,
        "details": {k: v for b in blocks for k, v in b["details"].items()},
    }
    for key, value in fields.items():
        record.setdefault(key, value)
    return record


_SM_STATES = {0: "NOTACTIVE", 1: "DISCOVERING", 2: "STANDBY", 3: "MASTER"}


# `saquery -s` (rdma-core saquery.c print_issm_records) lists the PortInfoRecords
# of the ports with IsSM under "IsSM ports", then a blank line and those with
# IsSMdisabled under "IsSMdisabled ports"; older infiniband-diags print the
# records alone. CapabilityMask bits (IBA PortInfo): IsSM 0x2, IsSMdisabled 0x400.
_ISSM_HEADING = re.compile(r"^(IsSM|IsSMdisabled) ports$")
IS_SM, IS_SM_DISABLED = 0x2, 0x400


def _sections(text: str) -> list[tuple[str | None, str]]:
    """(heading, text) per `saquery -s` section; the text keeps its line numbers
    (earlier lines blanked) so errors point at the input's own lines."""
    lines = text.split("\n")
    out: list[tuple[str | None, list[str]]] = [(None, [])]
    for i, line in enumerate(lines):
        if m := _ISSM_HEADING.match(line.strip()):
            out.append((m.group(1), [""] * (i + 1)))
        else:
            out[-1][1].append(line)
    return [(h, "\n".join(body)) for h, body in out if h is not None or any(x.strip() for x in body)]


def _number(value):
    """Decimal as rdma-core prints LIDs and ports, or hex (0x%X) as older infiniband-diags did."""
    if isinstance(value, str) and re.fullmatch(r"0[xX][0-9a-fA-F]+", value):
        return int(value, 16)
    return value


def _sm_port(r: Record, section: str | None) -> Record | None:
    """An SM port of `saquery -s`: IsSM by its section or, without headings, its mask."""
    cap = _number(r.get("capability_mask"))
    if r["type"] != "PortInfoRecord" or not isinstance(cap, int):
        return None
    return {
        "lid": _number(r.get("EndPortLid")),
        "port": _number(r.get("PortNum")),
        "master_sm_lid": _number(r.get("master_sm_base_lid")),
        "capability_mask": f"0x{cap:X}",
        "section": section,
        "is_sm": bool(cap & IS_SM) if section is None else section == "IsSM",
        "sm_disabled": bool(cap & IS_SM_DISABLED),
    }


def parse_saquery(text: str) -> Record:
    records = []
    sections = _sections(text)
    if not sections:
        raise not_recognised("saquery", "'NodeRecord dump:' (or another '...Record dump:') blocks", text)
    for section, body in sections:
        if section is not None and not body.strip():
            continue  # a heading with no port under it (no SM disabled anywhere)
        for b in _blocks("saquery", body, _RECORD, skip=_SUBHEADER):
            if b["header"] is None:
                raise not_recognised(
                    "saquery", "'NodeRecord dump:' (or another '...Record dump:') blocks", text
                )
            fields = {
                k: (guid(v) if k.lower().endswith("guid") and isinstance(v, str) else v)
                for k, v in b["fields"].items()
            }
            records.append({"type": b["header"], **fields, **({"section": section} if section else {})})
    ports = [p for r in records if (p := _sm_port(r, r.get("section"))) is not None]
    # `saquery -s` (SMInfoRecord): every SM of the subnet with its state, as the SA knows it.
    sms = [
        {
            "lid": r.get("LID"),
            "guid": r.get("GUID"),
            "act_count": r.get("ActCount"),
            "priority": r.get("Priority"),
            "state": r.get("SMState"),
            "state_name": _SM_STATES.get(r.get("SMState")) if isinstance(r.get("SMState"), int) else None,
        }
        for r in records
        if r["type"] == "SMInfoRecord"
    ]
    record: Record = {
        "records": records,
        "count": len(records),
        "sm_records": sms,
        "master": next((sm for sm in sms if sm["state"] == 3), None),
        # `saquery -s`: the ports an SM runs on, and those whose SM is turned off
        "sm_ports": [p for p in ports if p["is_sm"]],
        "sm_disabled_ports": [p for p in ports if not p["is_sm"] and p["sm_disabled"]],
    }
    if len(records) == 1:
        for key, value in records[0].items():
            record.setdefault(key, value)
    return record


_PKEY_ROW = re.compile(r"^\s*(\d+):((?:\s+0x[0-9a-fA-F]{4})+)\s*$")
_CAPACITY = re.compile(r"^(\d+) pkeys capacity for this port$")
_PKEY_CMD = re.compile(r"smpquery\s+(?:-\S+\s+)*(?:pkeys|PKeyTable)\s+(?:-\S+\s+)*(\S+)(?:\s+(\d+)(?=\s|$))?")


def _pkey_table(lid, port) -> Record:
    return {"lid": lid, "port": port, "entries": [], "capacity": None}


def _finish_table(table: Record) -> Record:
    members = [p for p in table["entries"] if p & 0x7FFF]
    table["pkeys"] = [f"0x{p:04x}" for p in members]
    # bit 15 = full member; the low 15 bits name the partition (0x8100 -> 0x0100 full)
    partitions: dict[str, str] = {}
    for p in members:
        base, kind = f"0x{p & 0x7FFF:04x}", "full" if p & 0x8000 else "limited"
        partitions[base] = kind if partitions.get(base, kind) == kind else "both"
    table["partitions"] = partitions
    table["entries"] = [f"0x{p:04x}" for p in table["entries"]]
    return table


def parse_pkeys(text: str) -> Record:
    tables: list[Record] = []
    for lineno, line in numbered(text):
        s = line.strip()
        if not s or s.startswith("ibwarn"):
            continue
        if m := _PKEY_CMD.search(s):  # a pasted prompt line names the port queried
            lid = m.group(1)
            tables.append(
                _pkey_table(
                    int(lid, 0) if re.fullmatch(r"0x[0-9a-fA-F]+|\d+", lid) else lid,
                    int(m.group(2)) if m.group(2) else None,
                )
            )
        elif m := _PKEY_ROW.match(line):
            if not tables or tables[-1]["capacity"] is not None:
                tables.append(_pkey_table(None, None))
            values = [int(v, 16) for v in m.group(2).split()]
            if int(m.group(1)) != len(tables[-1]["entries"]):
                raise bad_line(
                    "smpquery-pkeys", lineno, f"the row for index {len(tables[-1]['entries'])}", line
                )
            tables[-1]["entries"].extend(values)
        elif m := _CAPACITY.match(s):
            if not tables:
                tables.append(_pkey_table(None, None))
            tables[-1]["capacity"] = int(m.group(1))
        else:
            if not tables:
                raise not_recognised("smpquery-pkeys", "'   0: 0xffff 0x8100 ...' P_Key table rows", text)
            raise bad_line("smpquery-pkeys", lineno, "a P_Key table row '   0: 0xffff ...'", line)
    tables = [_finish_table(t) for t in tables if t["entries"] or t["capacity"] is not None]
    if not tables:
        raise not_recognised("smpquery-pkeys", "'   0: 0xffff 0x8100 ...' P_Key table rows", text)
    record: Record = {"tables": tables}
    if len(tables) == 1:
        record.update({k: v for k, v in tables[0].items()})
    return record


PARSERS = [
    Parser(
        name="perfquery",
        reads="perfquery [-x] [LID PORT]",
        func=parse_perfquery,
        description="port counters (errors, data, packets) of one port or the aggregate",
    ),
    Parser(
        name="smpquery-portinfo",
        reads="smpquery portinfo LID [PORT]",
        func=parse_portinfo,
        description="a port's PortInfo: state, width, speed, LIDs, MTU",
    ),
    Parser(
        name="smpquery-pkeys",
        reads="smpquery pkeys LID [PORT]",
        func=parse_pkeys,
        description="a port's P_Key table (membership bit and P_Key base)",
    ),
    Parser(
        name="saquery",
        reads="saquery [...]",
        func=parse_saquery,
        description="SA records (NodeRecord, PortInfoRecord, ...) as key/value lists",
    ),
]
