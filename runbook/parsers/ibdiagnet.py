"""The summary of an `ibdiagnet` run: errors and warnings per stage.

ibdiagnet2 (MLNX_OFED / UFM) ends with a "Summary" table
"-I- Stage  Warnings  Errors  Comment"; the old ibutils-1 ibdiagnet ends with
"-I- Stages Status Report:" whose columns are "STAGE  Errors  Warnings". The
column order is read from each table's own header. "Fabric Summary" counts
(ibdiagnet2) and the "-E-"/"-W-" messages are kept too.
"""
from __future__ import annotations

import re

from ._ib_common import lines_of, not_recognised
from .base import ParseError, Parser, Record

_HEADER2 = re.compile(r"^-I-\s+Stage\s+(Warnings|Errors)\s+(Warnings|Errors)(?:\s+Comment)?\s*$")
_HEADER1 = re.compile(r"^\s*STAGE\s+(Errors|Warnings)\s+(Errors|Warnings)\s*$")
_ROW = re.compile(r"^(?:-I-)?\s*(\S.*?)\s+(\d+)\s+(\d+)(?:\s+(.*?))?\s*$")
_FABRIC = re.compile(r"^([A-Za-z][A-Za-z ]+?)\s+:\s+(\d+)\s*$")
_MESSAGE = re.compile(r"^-([EW])-\s+(.*)$")
_DISCOVERED = re.compile(r"(\d+) nodes \((\d+) Switches & (\d+) CA-s\) discovered")
_LOG = re.compile(r"Please see (\S+) for complete log")
_AR = re.compile(r"^Adaptive Routing is enabled on (\d+) switches")


def parse(text: str) -> Record:
    stages: list[Record] = []
    fabric: Record = {}
    messages: dict[str, list[str]] = {"E": [], "W": []}
    columns: tuple[str, str] | None = None
    layout = discovered = log_file = ar_switches = None
    for raw in lines_of(text):
        line = raw.rstrip()
        if m := _HEADER2.match(line) or _HEADER1.match(line):
            columns = (m.group(1).lower(), m.group(2).lower())
            layout = "ibdiagnet2" if line.startswith("-I-") else "ibdiagnet1"
            continue
        if columns and (m := _ROW.match(line)) and not line.startswith(("-W-", "-E-")):
            row = {"stage": m.group(1), columns[0]: int(m.group(2)), columns[1]: int(m.group(3)),
                   "comment": m.group(4) or None}
            stages.append(row)
            continue
        if columns and line.strip() and not line.startswith((" ", "-I-")):
            columns = None  # the table has ended
        if m := _FABRIC.match(line):
            fabric[m.group(1).strip().lower().replace(" ", "_")] = int(m.group(2))
        if m := _MESSAGE.match(line.strip()):
            messages[m.group(1)].append(m.group(2).strip())
        if m := _DISCOVERED.search(line):
            discovered = {"nodes": int(m.group(1)), "switches": int(m.group(2)), "cas": int(m.group(3))}
        if m := _LOG.search(line):
            log_file = m.group(1)
        if m := _AR.match(line.strip()):
            ar_switches = int(m.group(1))
    if not stages:
        if layout:
            raise ParseError("ibdiagnet: found the stage table header but no stage rows (truncated?)")
        raise not_recognised("ibdiagnet", "an ibdiagnet 'Summary' / 'Stages Status Report' stage table", text)
    return {
        "layout": layout,
        "stages": stages,
        "by_stage": {s["stage"]: {"errors": s["errors"], "warnings": s["warnings"]} for s in stages},
        "errors": sum(s["errors"] for s in stages),
        "warnings": sum(s["warnings"] for s in stages),
        "fabric": fabric,
        "discovered": discovered,
        "adaptive_routing_switches": ar_switches,
        "error_messages": messages["E"],
        "warning_messages": messages["W"],
        "log_file": log_file,
    }


PARSERS = [Parser(name="ibdiagnet", reads="ibdiagnet [...] (console output)", func=parse,
           description="ibdiagnet console run: per-stage summary (errors/warnings), fabric summary, checks")]
