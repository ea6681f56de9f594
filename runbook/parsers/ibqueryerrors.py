"""`ibqueryerrors` (infiniband-diags): ports whose error counters exceed the
thresholds, then a "## Summary" footer. A clean fabric prints only the
footer, which parses to `clean: true` with empty `errors`.

With `-r` (--report-port) each port line is followed by its "Link info:" line
(rdma-core ibqueryerrors.c print_port_config): the link and the node at its
other end, kept as the port's and each error's `remote` {guid, lid, port, name}
(name "" when the port has no peer), so an error on a switch port names the
host cabled to it.
"""

from __future__ import annotations

import re

from ._ib_common import bad_line, guid, not_recognised, numbered
from .base import Parser, Record

_NODE = re.compile(r'^Errors for (?:(0x[0-9a-fA-F]+) )?"(.*)"$')
_PORT = re.compile(r"^GUID (0x[0-9a-fA-F]+) port (\d+|ALL):(.*)$")
_COUNTER = re.compile(r"\[(\w+) == (\d+)(?: \([^)]*\))?\]")
_SUMMARY_NODES = re.compile(r"^## Summary: (\d+) nodes checked, (\d+) bad nodes found$")
_SUMMARY_PORTS = re.compile(r"^##\s+(\d+) ports checked, (\d+) ports have errors beyond threshold$")
_PMA_FAILURES = re.compile(r"^##\s+(\d+) PMA query failures$")
_LINK_INFO = re.compile(
    r"^Link info:\s*\d+\s*\d+\[[^\]]*\]\s*==\(.*?\)==>\s*"
    r'(?:(0x[0-9a-fA-F]+)\s+(\d+)\s+(\d+))?\s*\[[^\]]*\]\s*"(.*)"'
)
_OTHER = re.compile(r"^(## .*|ibwarn.*|Suppressing: .*)$")


def parse(text: str) -> Record:
    nodes: list[Record] = []
    errors: list[Record] = []
    summary: Record = {}
    for lineno, line in numbered(text):
        s = line.strip()
        if not s:
            continue
        if m := _NODE.match(s):
            nodes.append({"guid": guid(m.group(1)) if m.group(1) else None, "name": m.group(2), "ports": []})
        elif m := _PORT.match(s):
            if not nodes:
                raise bad_line("ibqueryerrors", lineno, "an 'Errors for ...' line before port lines", line)
            counters = {name: int(value) for name, value in _COUNTER.findall(m.group(3))}
            if not counters:
                raise bad_line("ibqueryerrors", lineno, "'[CounterName == N]' entries", line)
            port = m.group(2) if m.group(2) == "ALL" else int(m.group(2))
            node = nodes[-1]
            node["ports"].append({"port": port, "guid": guid(m.group(1)), "counters": counters})
            if port != "ALL":  # "port ALL" repeats the per-port lines summed up
                errors.extend(
                    {
                        "node": node["name"],
                        "guid": guid(m.group(1)),
                        "port": port,
                        "counter": name,
                        "value": value,
                        "remote": None,
                    }
                    for name, value in counters.items()
                )
        elif m := _LINK_INFO.match(s):
            if not nodes or not nodes[-1]["ports"]:
                raise bad_line("ibqueryerrors", lineno, "a port line before its 'Link info:' line", line)
            remote = {
                "guid": guid(m.group(1)) if m.group(1) else None,
                "lid": int(m.group(2)) if m.group(2) else None,
                "port": int(m.group(3)) if m.group(3) else None,
                "name": m.group(4),
            }
            last = nodes[-1]["ports"][-1]
            last["remote"] = remote
            for e in errors:
                if e["guid"] == last["guid"] and e["port"] == last["port"]:
                    e["remote"] = remote
        elif m := _SUMMARY_NODES.match(s):
            summary.update(nodes_checked=int(m.group(1)), bad_nodes=int(m.group(2)))
        elif m := _SUMMARY_PORTS.match(s):
            summary.update(ports_checked=int(m.group(1)), bad_ports=int(m.group(2)))
        elif m := _PMA_FAILURES.match(s):
            summary["pma_query_failures"] = int(m.group(1))
        elif _OTHER.match(s):
            continue
        else:
            if not nodes and not summary:
                raise not_recognised(
                    "ibqueryerrors", "'Errors for ...' blocks and/or the '## Summary' footer", text
                )
            raise bad_line("ibqueryerrors", lineno, "an ibqueryerrors line", line)
    if not nodes and not summary:
        raise not_recognised("ibqueryerrors", "'Errors for ...' blocks and/or the '## Summary' footer", text)
    return {
        "nodes": nodes,
        "errors": errors,
        "summary": summary,
        "bad_ports": summary.get("bad_ports", len({(e["guid"], e["port"]) for e in errors})),
        "clean": not errors and not summary.get("bad_ports"),
    }


PARSERS = [
    Parser(
        name="ibqueryerrors",
        reads="ibqueryerrors [-c] [-k] ...",
        func=parse,
        description="ports whose error counters exceed thresholds, with the counters",
    )
]
