"""`ibstat` (infiniband-diags, C) and `ibstatus` (the older shell script).

Both say, per HCA port: state, physical state, rate, LID, SM LID, link layer.
A port left in Ethernet mode shows `Link layer: Ethernet` and base lid 0: the
"link up but no LID" fault the NIC-mode phase looks for.

ibstat record: cas [{name, node_type, type, num_ports, firmware_version, hardware_version,
node_guid, system_image_guid, ports {"1": {port, state, physical_state, rate, base_lid, lmc,
sm_lid, capability_mask, port_guid, link_layer}}}], ports (flat, with "ca"), by_name,
redacted: ["mlx5_0 Node GUID", ...] - values a pasted copy had masked ("xxxx",
"<redacted>", "****"): read as null, never guessed.
Lenient mode (a pasted fragment): "Port N:" blocks without their "CA '...'" line (ca null),
"..." elision lines, a port without its State line are read and said missing.
"""

from __future__ import annotations

import re

from ._ib_common import bad_line, guid, not_recognised, number, numbered, tidy_number
from .base import Gaps, ParseError, Parser, Record, strict_gaps

# --- ibstat ------------------------------------------------------------------
_CA = re.compile(r"^(CA|Switch|Router|iWARP RNIC|\?\?\?):? '(.+)'$")
_PORT = re.compile(r"^Port (\d+):$")
_KEY = re.compile(r"^([A-Za-z][A-Za-z ]*?):\s*(.*)$")
_CA_KEYS = {
    "Number of ports": "num_ports",
    "Firmware version": "firmware_version",
    "Hardware version": "hardware_version",
    "Node GUID": "node_guid",
    "System image GUID": "system_image_guid",
}
_PORT_KEYS = {
    "State": "state",
    "Physical state": "physical_state",
    "Rate": "rate",
    "Base lid": "base_lid",
    "LMC": "lmc",
    "SM lid": "sm_lid",
    "Capability mask": "capability_mask",
    "Port GUID": "port_guid",
    "Link layer": "link_layer",
}


def _ibstat_value(key: str, value: str):
    if key in ("num_ports", "base_lid", "lmc", "sm_lid"):
        return number(value)
    if key in ("node_guid", "system_image_guid", "port_guid"):
        return guid(value)
    if key == "rate":  # "400", "2.5" (1X SDR), "40 (FDR10)"
        m = re.fullmatch(r"([\d.]+)(?:\s*\((\w+)\))?", value)
        if not m:
            raise ParseError(f"ibstat: rate {value!r} is not a number")
        return tidy_number(float(m.group(1)))
    return value


_REDACTED = re.compile(r"^(?:<[^>]*>|\[[^\]]*\]|(?:0x)?[xX*#?]{3,}[xX*#?:]*|redacted|REDACTED|\.{3,}|…)$")
_ELIDED = re.compile(r"^(?:\.{3,}|…|\[\.\.\.\])$")


def _redacted(value: str) -> bool:
    """A value a pasted copy masked: 'xxxx', '0xXXXXXXXXXXXXXXXX', '<redacted>', '****'."""
    return bool(_REDACTED.match(value.strip())) or (
        "xx" in value.lower().replace("0x", "", 1)
        and not re.fullmatch(r"(?:0x)?[0-9a-fA-F:]+", value.strip())
    )


def parse_ibstat(text: str, *, gaps: Gaps | None = None) -> Record:
    gaps = strict_gaps(gaps, "ibstat")
    cas: list[Record] = []
    port: Record | None = None
    redacted: list[str] = []
    elided = False
    for lineno, line in numbered(text):
        stripped = line.strip()
        if not stripped:
            continue
        if _ELIDED.match(stripped):
            elided = True
            continue
        if m := _CA.match(stripped):
            cas.append({"name": m.group(2), "node_type": m.group(1), "type": None, "ports": {}})
            port = None
        elif not cas and _PORT.match(stripped):
            gaps.missing("the \"CA 'mlx5_0'\" line before the port block")
            cas.append({"name": None, "node_type": None, "type": None, "ports": {}})
            port = {"port": int(_PORT.match(stripped).group(1))}
            cas[-1]["ports"][_PORT.match(stripped).group(1)] = port
        elif not cas:
            raise not_recognised("ibstat", "\"CA 'mlx5_0'\" blocks", text)
        elif (
            (m := _KEY.match(stripped))
            and _redacted(m.group(2))
            and (m.group(1) in _CA_KEYS or m.group(1) in _PORT_KEYS or m.group(1).endswith(" type"))
        ):
            key = (
                _PORT_KEYS.get(m.group(1))
                if port is not None
                else ("type" if m.group(1).endswith(" type") else _CA_KEYS.get(m.group(1)))
            )
            if key is None:
                raise bad_line("ibstat", lineno, "a CA or port field", line)
            (port if port is not None else cas[-1])[key] = None
            redacted.append(
                f"{cas[-1]['name'] or '?'}{' port ' + str(port['port']) if port else ''} {m.group(1)}"
            )
        elif m := _PORT.match(stripped):
            port = {"port": int(m.group(1))}
            cas[-1]["ports"][m.group(1)] = port
        elif (m := _KEY.match(stripped)) and port is None:
            key = "type" if m.group(1).endswith(" type") else _CA_KEYS.get(m.group(1))
            if key is None:
                raise bad_line("ibstat", lineno, "a CA field (CA type, Node GUID, ...)", line)
            if key in cas[-1] and key != "type" or (key == "type" and cas[-1]["type"] is not None):
                # the same CA field twice: the next CA's "CA '...'" line is missing (cut or elided)
                gaps.missing(f"the \"CA '...'\" line before line {lineno}")
                cas.append({"name": None, "node_type": None, "type": None, "ports": {}})
            cas[-1][key] = _ibstat_value(key, m.group(2).strip())
        elif m := _KEY.match(stripped):
            key = _PORT_KEYS.get(m.group(1))
            if key is None:
                raise bad_line("ibstat", lineno, "a port field (State, Rate, Base lid, ...)", line)
            port[key] = _ibstat_value(key, m.group(2).strip())
            if key == "rate" and "(" in m.group(2):
                port["rate_note"] = m.group(2).split("(", 1)[1].rstrip(")")
        else:
            raise bad_line("ibstat", lineno, "'Key: value' or 'Port N:'", line)
    if not cas:
        raise not_recognised("ibstat", "\"CA 'mlx5_0'\" blocks", text)
    flat = []
    for ca in cas:
        for number_, p in ca["ports"].items():
            if "state" not in p:
                if not gaps.lenient:
                    raise ParseError(f"ibstat: CA {ca['name']} port {number_} has no State line (truncated?)")
                gaps.missing(f"the State line of CA {ca['name'] or '?'} port {number_}")
                p["state"] = None
            flat.append({"ca": ca["name"], **p})
    if elided:
        gaps.missing("lines elided ('...') from the CA blocks")
    for what in redacted:
        if gaps.lenient:
            gaps.missing(f"{what} (redacted in the paste)")
    return {
        "cas": cas,
        "ports": flat,
        "by_name": {ca["name"]: ca for ca in cas if ca["name"] is not None},
        "redacted": redacted,
    }


# --- ibstatus ----------------------------------------------------------------
_DEVICE = re.compile(r"^Infiniband device '(\S+)' port (\d+) status:$")
_STATUS_KEYS = {
    "default gid": "default_gid",
    "base lid": "base_lid",
    "sm lid": "sm_lid",
    "state": "state",
    "phys state": "phys_state",
    "rate": "rate",
    "link_layer": "link_layer",
}
_NUMBERED = re.compile(r"^(\d+):\s*(\S+)$")
_RATE = re.compile(r"^([\d.]+)\s*Gb/sec(?:\s*\((\d+X)\s*(\w+)\))?$")


def _status_field(port: Record, key: str, value: str, lineno: int, line: str) -> None:
    if key in ("base_lid", "sm_lid"):
        port[key] = number(value)
    elif key in ("state", "phys_state"):
        m = _NUMBERED.match(value)
        if not m:
            raise bad_line("ibstatus", lineno, "'N: NAME' state", line)
        port[key], port[key + "_num"] = m.group(2), int(m.group(1))
    elif key == "rate":
        m = _RATE.match(value)
        if not m:
            raise bad_line("ibstatus", lineno, "'N Gb/sec (4X HDR)'", line)
        port.update(rate=value, rate_gbps=tidy_number(float(m.group(1))), width=m.group(2), speed=m.group(3))
    else:
        port[key] = value


def parse_ibstatus(text: str) -> Record:
    ports: list[Record] = []
    for lineno, line in numbered(text):
        stripped = line.strip()
        if not stripped:
            continue
        if m := _DEVICE.match(stripped):
            ports.append({"ca": m.group(1), "port": int(m.group(2))})
            continue
        m = re.match(r"^([a-z_ ]+):\s*(.*)$", stripped)
        key = _STATUS_KEYS.get(m.group(1).strip()) if m else None
        if not ports:
            raise not_recognised("ibstatus", "\"Infiniband device 'mlx5_0' port 1 status:\" blocks", text)
        if key is None:
            raise bad_line("ibstatus", lineno, "a port status field (base lid, state, rate, ...)", line)
        _status_field(ports[-1], key, m.group(2).strip(), lineno, line)
    if not ports:
        raise not_recognised("ibstatus", "\"Infiniband device 'mlx5_0' port 1 status:\" blocks", text)
    for p in ports:
        if "state" not in p:
            raise ParseError(f"ibstatus: {p['ca']} port {p['port']} has no state line (truncated?)")
    return {"ports": ports}


PARSERS = [
    Parser(
        name="ibstat",
        reads="ibstat [CA [PORT]]",
        func=parse_ibstat,
        lenient=True,
        description="per HCA and port: state, physical state, rate, LIDs, GUIDs, link layer, firmware",
    ),
    Parser(
        name="ibstatus",
        reads="ibstatus",
        func=parse_ibstatus,
        description="per HCA port: state, physical state, rate, LIDs, link layer",
    ),
]
