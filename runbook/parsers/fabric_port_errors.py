"""Port error counters of every port of the fabric, from whichever tool ran:

    if command -v ibdiagnet >/dev/null 2>&1; then
      ibdiagnet -o DIR; echo "### DIR/ibdiagnet2.db_csv"
      awk '/^START_(NODES|LINKS|PM_INFO)$/ {p=1} p {print} /^END_/ {p=0}' DIR/ibdiagnet2.db_csv
    else
      ibqueryerrors -r
    fi

- ibdiagnet (ibutils2): the console run (its "Summary" stage table, read by the
  `ibdiagnet` parser) and three sections of its database file ibdiagnet2.db_csv:
  NODES (NodeDesc, NodeGUID, ...), LINKS (NodeGuid1, PortNum1, NodeGuid2,
  PortNum2) and PM_INFO (NodeGUID, PortNumber and one column per PortCounters
  field). Each section starts with START_<NAME>, then a header row naming its
  columns (read by name: the column order differs between releases), then rows,
  then END_<NAME>.
- ibqueryerrors -r (infiniband-diags): the ports over threshold, each with its
  "Link info:" line naming the node at the other end.

Record (both sources): source ("ibdiagnet" | "ibqueryerrors"),
errors [{node (node description), guid, port, counter, value,
         remote {guid, port, name} | null (the other end of the link)}],
summary {nodes_checked, ports_checked}, clean (bool),
ibdiagnet only: stages (the console's stage table, by_stage from the ibdiagnet parser).
"""

from __future__ import annotations

import csv
import re

from . import ibdiagnet as ibdiagnet_parser
from . import ibqueryerrors as ibqueryerrors_parser
from ._ib_common import guid, lines_of, not_recognised
from .base import ParseError, Parser, Record
from .mad_dumps import (
    ERROR_COUNTERS,  # the IBTA PortCounters error fields; ibdiagnet's PM_INFO uses the same names
)

_START = re.compile(r"^START_(\w+)$")
_END = re.compile(r"^END_(\w+)$")


def _sections(lines: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """db_csv sections as their CSV lines (header first; _rows reads one); the
    lines outside them. Only the few sections used are read as rows: a fabric's
    db_csv has many more, and large ones."""
    sections: dict[str, list[str]] = {}
    outside: list[str] = []
    name: str | None = None
    body: list[str] = []
    for line in lines:
        s = line.strip()
        if name is None:
            if m := _START.match(s):
                name, body = m.group(1), []
            else:
                outside.append(line)
            continue
        if m := _END.match(s):
            if m.group(1) != name:
                raise ParseError(f"fabric-port-errors: END_{m.group(1)} inside section {name}")
            if not body:
                raise ParseError(f"fabric-port-errors: section {name} has no header row")
            sections[name] = body
            name = None
        elif s:
            body.append(s)
    if name is not None:
        raise ParseError(f"fabric-port-errors: section {name} has no END_{name} line (truncated?)")
    return sections, outside


_DIGITS = re.compile(r"\d+")  # compiled once: every counter of every port


def _rows(body: list[str]) -> list[dict[str, str]]:
    return list(csv.DictReader(body))


def _need(rows: list[dict[str, str]], section: str, columns: tuple[str, ...]) -> None:
    if rows and (missing := [c for c in columns if c not in rows[0]]):
        raise ParseError(f"fabric-port-errors: {section} lacks the column(s) {', '.join(missing)}")


def _from_ibdiagnet(text: str, lines: list[str]) -> Record:
    sections, outside = _sections(lines)
    for needed in ("NODES", "PM_INFO"):
        if needed not in sections:
            raise ParseError(
                f"fabric-port-errors: the ibdiagnet2.db_csv section {needed} is missing "
                "(START_NODES / START_PM_INFO)"
            )
    nodes, pm, links = _rows(sections["NODES"]), _rows(sections["PM_INFO"]), _rows(sections.get("LINKS", []))
    _need(nodes, "NODES", ("NodeDesc", "NodeGUID"))
    _need(pm, "PM_INFO", ("NodeGUID", "PortNumber"))
    _need(links, "LINKS", ("NodeGuid1", "PortNum1", "NodeGuid2", "PortNum2"))
    names = {guid(n["NodeGUID"]): n["NodeDesc"] for n in nodes}
    peer: dict[tuple[str, int], tuple[str, int]] = {}
    for link in links:
        a = (guid(link["NodeGuid1"]), int(link["PortNum1"]))
        b = (guid(link["NodeGuid2"]), int(link["PortNum2"]))
        peer[a], peer[b] = b, a
    errors = []
    for row in pm:
        node_guid, port = guid(row["NodeGUID"]), int(row["PortNumber"])
        other = peer.get((node_guid, port))
        remote = {"guid": other[0], "port": other[1], "name": names.get(other[0], "")} if other else None
        for counter in ERROR_COUNTERS:
            value = (row.get(counter) or "").strip()
            if _DIGITS.fullmatch(value) and int(value):
                errors.append(
                    {
                        "node": names.get(node_guid, ""),
                        "guid": node_guid,
                        "port": port,
                        "counter": counter,
                        "value": int(value),
                        "remote": remote,
                    }
                )
    console = "\n".join(outside)
    stages = ibdiagnet_parser.parse(console) if "Stage" in console or "STAGE" in console else None
    return {
        "source": "ibdiagnet",
        "errors": errors,
        "summary": {"nodes_checked": len(nodes), "ports_checked": len(pm)},
        "clean": not errors,
        "stages": stages["stages"] if stages else [],
        "by_stage": stages["by_stage"] if stages else {},
    }


def _from_ibqueryerrors(text: str) -> Record:
    r = ibqueryerrors_parser.parse(text)
    errors = [{**e, "remote": e.get("remote")} for e in r["errors"]]
    if "nodes_checked" not in r["summary"]:
        raise ParseError("fabric-port-errors: the '## Summary: N nodes checked' footer is missing")
    return {
        "source": "ibqueryerrors",
        "errors": errors,
        "summary": {k: r["summary"].get(k) for k in ("nodes_checked", "ports_checked")},
        "clean": r["clean"],
        "stages": [],
        "by_stage": {},
    }


def parse(text: str) -> Record:
    lines = lines_of(text)
    if any(_START.match(x.strip()) for x in lines):
        return _from_ibdiagnet(text, lines)
    if any(x.strip().startswith(("## Summary:", "Errors for")) for x in lines):
        return _from_ibqueryerrors(text)
    raise not_recognised(
        "fabric-port-errors",
        "ibdiagnet2.db_csv sections (START_PM_INFO ...) or ibqueryerrors output ('## Summary: ...')",
        text,
    )


PARSERS = [
    Parser(
        name="fabric-port-errors",
        reads="ibdiagnet + its db_csv NODES/LINKS/PM_INFO sections, else ibqueryerrors -r",
        func=parse,
        description="every port error counter over zero, with both ends of its link, from ibdiagnet or ibqueryerrors",
    )
]
