"""The summary of an `ibdiagnet` run: errors and warnings per stage.

ibdiagnet2 (MLNX_OFED / UFM) ends with a "Summary" table
"-I- Stage  Warnings  Errors  Comment"; the old ibutils-1 ibdiagnet ends with
"-I- Stages Status Report:" whose columns are "STAGE  Errors  Warnings". The
column order is read from each table's own header. "Fabric Summary" counts
(ibdiagnet2) and the "-E-"/"-W-" messages are kept too.

Record: layout, stages [{stage, errors, warnings, comment}], by_stage, errors, warnings,
fabric {total_nodes, ib_switches, ib_channel_adapters, ib_aggregation_nodes, ib_routers,
number_of_ll_aggregation_trees, unique_job_ids, ...} (ints), discovered, log_file,
adaptive_routing_switches, error_messages, warning_messages,
checks: [{name ("Rail Optimized Topology Validation", "SHARP check trees"), ok (bool),
          result ("finished successfully" | "finished with errors" | ...)}] from the
          "-I- <check> finished successfully" / "-E- <check> finished with errors" lines,
sections: the dashed-separator section titles in order.
Lenient mode (a pasted part of the console output, e.g. only the SHARP or rail-validation
section): the checks and counts are read and the missing Summary table is said; strict
(a step's verify) requires the Summary table.
"""

from __future__ import annotations

import re

from ._ib_common import lines_of, not_recognised
from .base import Gaps, ParseError, Parser, Record, strict_gaps

_HEADER2 = re.compile(r"^-I-\s+Stage\s+(Warnings|Errors)\s+(Warnings|Errors)(?:\s+Comment)?\s*$")
_HEADER1 = re.compile(r"^\s*STAGE\s+(Errors|Warnings)\s+(Errors|Warnings)\s*$")
_ROW = re.compile(r"^(?:-I-)?\s*(\S.*?)\s+(\d+)\s+(\d+)(?:\s+(.*?))?\s*$")
_FABRIC = re.compile(r"^([A-Za-z][A-Za-z0-9 ]+?)\s*:\s+(\d+)\s*$")
_CHECK = re.compile(
    r"^-([IEW])-\s+(?P<name>.+?)\s+(?P<result>finished (?:successfully|with (?:errors|warnings)))\.?$"
)
_MESSAGE = re.compile(r"^-([EW])-\s+(.*)$")
_DISCOVERED = re.compile(r"(\d+) nodes \((\d+) Switches & (\d+) CA-s\) discovered")
_LOG = re.compile(r"Please see (\S+) for complete log")
_AR = re.compile(r"^Adaptive Routing is enabled on (\d+) switches")


def parse(text: str, *, gaps: Gaps | None = None) -> Record:
    gaps = strict_gaps(gaps, "ibdiagnet")
    checks: list[Record] = []
    sections: list[str] = []
    previous = ""
    stages: list[Record] = []
    fabric: Record = {}
    messages: dict[str, list[str]] = {"E": [], "W": []}
    columns: tuple[str, str] | None = None
    layout = discovered = log_file = ar_switches = None
    for raw in lines_of(text):
        line = raw.rstrip()
        if re.fullmatch(r"-{10,}", previous.strip()) and line.strip() and not line.startswith("-"):
            sections.append(line.strip())
        previous = line
        if m := _CHECK.match(line.strip()):
            checks.append(
                {"name": m["name"], "ok": m["result"] == "finished successfully", "result": m["result"]}
            )
        if m := _HEADER2.match(line) or _HEADER1.match(line):
            columns = (m.group(1).lower(), m.group(2).lower())
            layout = "ibdiagnet2" if line.startswith("-I-") else "ibdiagnet1"
            continue
        if columns and (m := _ROW.match(line)) and not line.startswith(("-W-", "-E-")):
            row = {
                "stage": m.group(1),
                columns[0]: int(m.group(2)),
                columns[1]: int(m.group(3)),
                "comment": m.group(4) or None,
            }
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
        if not (gaps.lenient and (checks or fabric)):
            raise not_recognised(
                "ibdiagnet", "an ibdiagnet 'Summary' / 'Stages Status Report' stage table", text
            )
        gaps.missing("the 'Summary' stage table at the end of the run")
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
        "checks": checks,
        "sections": sections,
    }


PARSERS = [
    Parser(
        name="ibdiagnet",
        reads="ibdiagnet [...] (console output)",
        func=parse,
        lenient=True,
        description="ibdiagnet console run: per-stage summary (errors/warnings), fabric summary, checks",
    )
]
