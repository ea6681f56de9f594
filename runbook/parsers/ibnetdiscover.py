"""`ibnetdiscover` in its three layouts, and `ibswitches`.

- topology (default): vendid/devid/...guid lines, then "Switch  N \"S-guid\" # \"desc\" base port 0
  lid L lmc M" or "Ca  N \"H-guid\" # \"desc\"" and one "[port] ..." line per cabled port;
- ports report (`-p`): "CA  5  1 0xGUID 4x SDR - SW  4  1 0xGUID ( 'a' - 'b' )";
- node lists (`-l`, `-H`, `-S`, and the ibhosts / ibswitches / ibnodes scripts):
  "Switch : 0xGUID ports 36 \"desc\" base port 0 lid 2 lmc 0".
`name` is always the quoted node description. `links` has one entry per port
line, so a cable between two listed nodes appears once from each end.
"""

from __future__ import annotations

import re

from ._ib_common import bad_line, guid, lane_from_name, link_rate, not_recognised, numbered, width_lanes
from .base import Parser, Record

_TYPES = {
    "Ca": "CA",
    "CA": "CA",
    "Switch": "Switch",
    "SW": "Switch",
    "Router": "Router",
    "Rt": "Router",
    "RT": "Router",
    "S": "Switch",
    "H": "CA",
    "R": "Router",
}
_LIST = re.compile(
    r"^(Ca|Switch|Router|Rt)\s*:\s*(0x[0-9a-fA-F]+)\s+ports\s+(\d+)\s+"
    r"(?:devid\s+(0x[0-9a-fA-F]+)\s+vendid\s+(0x[0-9a-fA-F]+)\s+)?\"(.*)\""
    r"(?:\s+(base|enhanced)\s+port\s+0\s+lid\s+(\d+)\s+lmc\s+(\d+))?$"
)
_PORTS_REPORT = re.compile(
    r"^(CA|SW|RT|\?\?)\s+(\d+)\s+(\d+)\s+(0x[0-9a-fA-F]{16})\s+(\S+)\s+(\S+)\s+"
    r"(?:-\s+(CA|SW|RT|\?\?)\s+(\d+)\s+(\d+)\s+(0x[0-9a-fA-F]{16})\s+\(\s*'(.*?)'\s+-\s+'(.*)'\s*\)|'(.*)')$"
)
_ID = re.compile(r"^(vendid|devid|sysimgguid|switchguid|caguid|rtguid)=(0x[0-9a-fA-F]+)")
_SWITCH = re.compile(
    r"^Switch\s+(\d+)\s+\"S-([0-9a-fA-F]+)\"\s*#\s*\"(.*)\"\s+"
    r"(base|enhanced)\s+port\s+0\s+lid\s+(\d+)\s+lmc\s+(\d+)"
)
_CA = re.compile(r"^(Ca|Rt)\s+(\d+)\s+\"([HR])-([0-9a-fA-F]+)\"\s*#\s*\"(.*)\"")
_LINK = re.compile(
    r"^\[(\d+)\](?:\[ext \d+\])?(?:\(([0-9a-fA-F]+)\))?\s+\"([SHR?])-([0-9a-fA-F]+)\"\[(\d+)\](?:\[ext \d+\])?"
    r"\s*(?:\(([0-9a-fA-F]+)\))?\s*#\s*(?:lid (\d+) lmc (\d+) )?\"(.*)\"\s+lid\s+(\d+)\s+(\d+x|\?\?)(\S+)"
)
_SKIP = re.compile(r"^(#.*|Non-Chassis Nodes|Chassis \d+.*|Hostname: .*)$")


def _speed(width: str, speed: str) -> Record:
    return {"width": width, "speed": speed, "rate": link_rate(width_lanes(width), lane_from_name(speed))}


def _node(kind: str, node_guid: str, name: str, nports: int | None) -> Record:
    return {
        "type": kind,
        "guid": node_guid,
        "name": name,
        "num_ports": nports,
        "lid": None,
        "lmc": None,
        "ports": [],
    }


def _add_link(links: list, node: Record, port: Record) -> None:
    peer = port.get("peer") or {}
    links.append(
        {
            "node": node["name"],
            "node_type": node["type"],
            "node_guid": node["guid"],
            "port": port["port"],
            "port_guid": port.get("port_guid"),
            "lid": port.get("lid"),
            "width": port.get("width"),
            "speed": port.get("speed"),
            "rate": port.get("rate"),
            "peer_name": peer.get("name"),
            "peer_type": peer.get("type"),
            "peer_guid": peer.get("guid"),
            "peer_port": peer.get("port"),
            "peer_lid": peer.get("lid"),
        }
    )


def parse(text: str) -> Record:
    nodes: list[Record] = []
    by_guid: dict[tuple, Record] = {}
    links: list[Record] = []
    ids: Record = {}
    formats: set[str] = set()
    node: Record | None = None
    for lineno, line in numbered(text):
        s = line.strip()
        if not s:
            continue
        if m := _LIST.match(s):
            formats.add("list")
            n = _node(_TYPES[m.group(1)], guid(m.group(2)), m.group(6), int(m.group(3)))
            n.update(devid=m.group(4), vendid=m.group(5))
            if m.group(8):
                n.update(lid=int(m.group(8)), lmc=int(m.group(9)))
            nodes.append(n)
        elif m := _PORTS_REPORT.match(s):
            formats.add("ports")
            kind, port_guid = _TYPES[m.group(1)], guid(m.group(4))
            name = m.group(11) if m.group(11) is not None else m.group(13)
            key = (kind, name) if kind != "Switch" else (kind, port_guid)
            n = by_guid.setdefault(key, _node(kind, port_guid if kind == "Switch" else None, name, None))
            if n not in nodes:
                nodes.append(n)
            port = {
                "port": int(m.group(3)),
                "lid": int(m.group(2)),
                "port_guid": port_guid,
                **_speed(m.group(5), m.group(6)),
                "peer": None,
            }
            if m.group(7):
                port["peer"] = {
                    "type": _TYPES[m.group(7)],
                    "lid": int(m.group(8)),
                    "port": int(m.group(9)),
                    "guid": guid(m.group(10)),
                    "name": m.group(12),
                }
            n["lid"] = n["lid"] if n["lid"] is not None else port["lid"]
            n["ports"].append(port)
            _add_link(links, n, port)
        elif m := _ID.match(s):
            ids[m.group(1)] = m.group(2)
        elif m := _SWITCH.match(s):
            formats.add("topology")
            node = _node("Switch", guid(m.group(2)), m.group(3), int(m.group(1)))
            node.update(lid=int(m.group(5)), lmc=int(m.group(6)), port0=m.group(4), **_ids(ids))
            nodes.append(node)
        elif m := _CA.match(s):
            formats.add("topology")
            node = _node(_TYPES[m.group(1)], guid(m.group(4)), m.group(5), int(m.group(2)))
            node.update(**_ids(ids))
            nodes.append(node)
        elif m := _LINK.match(s):
            if node is None:
                raise bad_line("ibnetdiscover", lineno, "a Switch/Ca record before its port lines", line)
            port = {
                "port": int(m.group(1)),
                "port_guid": guid(m.group(2)) if m.group(2) else None,
                "lid": int(m.group(7)) if m.group(7) else node["lid"],
                "lmc": int(m.group(8)) if m.group(8) else None,
                **_speed(m.group(11), m.group(12)),
                "peer": {
                    "type": _TYPES[m.group(3)],
                    "guid": guid(m.group(4)),
                    "port": int(m.group(5)),
                    "port_guid": guid(m.group(6)) if m.group(6) else None,
                    "name": m.group(9),
                    "lid": int(m.group(10)),
                },
            }
            if node["lid"] is None:  # a CA's LID is per port: the node shows its first port's
                node["lid"] = port["lid"]
            node["ports"].append(port)
            _add_link(links, node, port)
        elif _SKIP.match(s):
            continue
        else:
            if not nodes:
                raise not_recognised(
                    "ibnetdiscover", "ibnetdiscover topology, ports (-p) or node list output", text
                )
            raise bad_line("ibnetdiscover", lineno, "an ibnetdiscover node, port or id line", line)
    if not nodes:
        raise not_recognised("ibnetdiscover", "ibnetdiscover topology, ports (-p) or node list output", text)
    return {
        "format": "+".join(sorted(formats)),
        "nodes": nodes,
        "links": links,
        "switches": [n for n in nodes if n["type"] == "Switch"],
        "cas": [n for n in nodes if n["type"] == "CA"],
    }


def _ids(ids: Record) -> Record:
    """The vendid/devid/...guid lines just read belong to the next node record."""
    out = {
        "vendid": ids.get("vendid"),
        "devid": ids.get("devid"),
        "sysimgguid": guid(ids["sysimgguid"]) if ids.get("sysimgguid") else None,
    }
    ids.clear()
    return out


def parse_ibswitches(text: str) -> Record:
    switches = []
    for lineno, line in numbered(text):
        s = line.strip()
        if not s:
            continue
        m = _LIST.match(s)
        if not m or m.group(1) != "Switch":
            if not switches and not m:
                raise not_recognised("ibswitches", "'Switch : 0xGUID ports N \"desc\" ... lid N' lines", text)
            raise bad_line(
                "ibswitches",
                lineno,
                "a 'Switch : 0xGUID ports N \"desc\" ...' line "
                "(ibhosts/ibnodes output goes to the ibnetdiscover parser)",
                line,
            )
        switches.append(
            {
                "guid": guid(m.group(2)),
                "name": m.group(6),
                "num_ports": int(m.group(3)),
                "lid": int(m.group(8)) if m.group(8) else None,
                "lmc": int(m.group(9)) if m.group(9) else None,
                "port0": m.group(7),
            }
        )
    if not switches:
        raise not_recognised("ibswitches", "'Switch : 0xGUID ports N \"desc\" ... lid N' lines", text)
    return {"switches": switches, "count": len(switches), "by_name": {s["name"]: s for s in switches}}


PARSERS = [
    Parser(
        name="ibnetdiscover",
        reads="ibnetdiscover [-p|-l|-H|-S], ibhosts, ibnodes",
        func=parse,
        description="fabric topology: switches and CAs with GUIDs, LIDs, descriptions and links",
    ),
    Parser(
        name="ibswitches",
        reads="ibswitches",
        func=parse_ibswitches,
        description="the switches of the fabric: GUID, ports, description, LID",
    ),
]
