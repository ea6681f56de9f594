"""`iblinkinfo` (infiniband-diags): every port of every node and what it is
cabled to. Reads the default layout ("CA: desc:" / "Switch: 0xGUID desc:"
headers over indented port lines, including a CA-only back-to-back fabric) and
the one-line-per-port layout of `iblinkinfo -l`.

`-l` lines do not say whether a node is a switch or a CA, so nodes read from
them have `type: null` (never guessed); `links[*].node` names them either way.
`rate` is the nominal data rate in Gb/s (width x lane rate: 4X EDR = 100).
"""

from __future__ import annotations

import re

from ._ib_common import bad_line, guid, lane_from_signal, link_rate, not_recognised, numbered, width_lanes
from .base import Parser, Record

TOOL = "iblinkinfo"
_HEADER = re.compile(r"^(CA|Switch|Router|\?\?): (?:(0x[0-9a-fA-F]{16}) )?(.*):$")
_PORT = re.compile(
    r"^(?:(?P<guid>0x[0-9a-fA-F]{16})\s+)?(?:\"(?P<name>[^\"]*)\"\s+)?"
    r"(?P<lid>\d+)\s+(?P<port>\d+)\[\s*(?P<ext>\d*)\s*\]\s+==\((?P<link>.*?)\)==>\s*(?P<remote>.*)$"
)
_LINK = re.compile(r"^\s*(?:(?P<width>\d+X)\s+(?P<speed>.+?)\s+)?(?P<state>\w+)/\s*(?P<phys>\w+)\s*$")
_HOQ = re.compile(r"\)\s*\(HOQ:(\d+) VL_Stall:(\d+)$")
_REMOTE = re.compile(
    r"^(?:(?P<guid>0x[0-9a-fA-F]{16})\s+)?(?P<lid>\d+)\s+(?P<port>\d+)\[\s*(?P<ext>\d*)\s*\]\s+"
    r"\"(?P<name>.*)\"\s+\((?P<could_be>.*)\)$"
)
_NO_PEER = re.compile(r'^\[\s*\]\s+""\s+\(\s*\)$|^"Port not available"$')


def _link(text: str, lineno: int, line: str) -> Record:
    hoq = _HOQ.search(text)
    if hoq:  # iblinkinfo -p appends switch settings inside the arrow
        text = text[: hoq.start()]
    m = _LINK.match(text)
    if not m:
        raise bad_line(TOOL, lineno, "'( 4X 25.78125 Gbps Active/  LinkUp)'", line)
    lane, generation = lane_from_signal(m["speed"])
    out = {
        "state": m["state"],
        "phys_state": m["phys"],
        "width": m["width"],
        "speed": m["speed"],
        "generation": generation,
        "rate": link_rate(width_lanes(m["width"]), lane),
    }
    if hoq:
        out.update(hoq=int(hoq.group(1)), vl_stall=int(hoq.group(2)))
    return out


def _peer(text: str, lineno: int, line: str) -> tuple[Record | None, str | None]:
    text = text.strip()
    if _NO_PEER.match(text):
        return None, None
    m = _REMOTE.match(text)
    if not m:
        raise bad_line(TOOL, lineno, "'LID PORT[  ] \"name\" ( )' after '==>'", line)
    peer = {
        "lid": int(m["lid"]),
        "port": int(m["port"]),
        "guid": guid(m["guid"]) if m["guid"] else None,
        "name": m["name"],
        "ext_port": int(m["ext"]) if m["ext"] else None,
    }
    return peer, (m["could_be"].strip() or None)


def _node_for(nodes: list[Record], index: dict, key, kind, node_guid, name) -> Record:
    if key not in index:
        index[key] = {"type": kind, "guid": node_guid, "name": name, "lid": None, "ports": []}
        nodes.append(index[key])
    return index[key]


def parse(text: str) -> Record:
    nodes: list[Record] = []
    index: dict = {}
    node: Record | None = None
    links: list[Record] = []
    truncated = False
    for lineno, line in numbered(text):
        stripped = line.strip()
        if not stripped or stripped.startswith("ibwarn"):
            continue
        if stripped in ("...", "…"):
            truncated = True
            continue
        if m := _HEADER.match(stripped):
            kind = m.group(1)
            node_guid = guid(m.group(2)) if m.group(2) else None
            node = _node_for(nodes, index, (kind, node_guid, m.group(3)), kind, node_guid, m.group(3))
            continue
        m = _PORT.match(stripped)
        if not m:
            if not nodes:
                raise not_recognised(
                    TOOL, "iblinkinfo port lines ('... ==( 4X ... Active/ LinkUp)==> ...')", text
                )
            raise bad_line(TOOL, lineno, "an iblinkinfo port line or a 'CA:'/'Switch:' header", line)
        if m["name"] is not None:  # -l layout: the node is named on every line
            node = _node_for(nodes, index, ("line", m["name"].strip()), None, None, m["name"].strip())
        elif node is None:
            raise bad_line(TOOL, lineno, "a 'CA:' or 'Switch:' header before the port lines", line)
        port_guid = guid(m["guid"]) if m["guid"] else None
        if node["type"] is None and port_guid:  # -l: a switch's ports share one GUID, a CA's do not
            if not node["ports"]:
                node["guid"] = port_guid
            elif node["guid"] != port_guid:
                node["guid"] = None
        link = _link(m["link"], lineno, line)
        peer, could_be = _peer(m["remote"], lineno, line)
        port = {
            "port": int(m["port"]),
            "lid": int(m["lid"]),
            "port_guid": port_guid,
            "ext_port": int(m["ext"]) if m["ext"] else None,
            **link,
            "peer": peer,
            "could_be": could_be,
        }
        node["ports"].append(port)
        if node["type"] == "Switch" or node["lid"] is None:
            node["lid"] = port["lid"]
        links.append(
            {
                "node": node["name"],
                "node_type": node["type"],
                "node_guid": node["guid"],
                "port_guid": port_guid,
                "switch": node["name"] if node["type"] == "Switch" else None,
                "port": port["port"],
                "lid": port["lid"],
                "state": port["state"],
                "phys_state": port["phys_state"],
                "width": port["width"],
                "speed": port["speed"],
                "rate": port["rate"],
                "generation": port["generation"],
                "peer_name": peer["name"] if peer else None,
                "peer_port": peer["port"] if peer else None,
                "peer_lid": peer["lid"] if peer else None,
                "peer_guid": peer["guid"] if peer else None,
            }
        )
    if not links:
        raise not_recognised(TOOL, "iblinkinfo port lines ('... ==( 4X ... Active/ LinkUp)==> ...')", text)
    return {
        "nodes": nodes,
        "switches": [n for n in nodes if n["type"] == "Switch"],
        "cas": [n for n in nodes if n["type"] == "CA"],
        "links": links,
        "truncated": truncated,
    }


PARSERS = [
    Parser(
        name="iblinkinfo",
        reads="iblinkinfo [-l] [--switches-only]",
        func=parse,
        description="every switch port and its link: width, speed, state, physical state, peer",
    )
]
