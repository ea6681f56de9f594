"""nccl-tests output (`all_reduce_perf`, `all_gather_perf`, `alltoall_perf`, ...).

Record:
  rows: [{size, count, type, redop, root (null in the old format without it),
          out_of_place: {time_us, algbw, busbw, wrong | error},
          in_place:     {time_us, algbw, busbw, wrong | error}}]
        `wrong` is the integer "#wrong" column (null for "N/A"); old builds print a
        float max-error column "error" instead.
  busbw:          out-of-place busbw of the LARGEST message size - the figure a
                  baseline is quoted for ("busbw at 8 GB"); averages include tiny
                  latency-bound sizes and are poor pass criteria.
  busbw_in_place: the same row's in-place busbw
  max_busbw:      the best busbw of any row, either placement
  avg_busbw:      "# Avg bus bandwidth" as printed (null if the run stopped before it)
  out_of_bounds:  "# Out of bounds values : N" (null if absent), out_of_bounds_ok
  wrong_total:    sum of the integer #wrong cells (0 for the old float format)
  complete:       whether the "# Avg bus bandwidth" footer was reached
  collective, nccl_version, tests_version, ranks [{rank, host, device, bus_id, gpu}],
  rank_count, params {nThread, nGpus, minBytes, maxBytes, ...} from the header line
  rank_labels:    the launcher's line labels that were stripped: "srun" (`srun -l`: "0: "),
                  "mpirun" (`mpirun --tag-output`: "[1,0]<stdout>:"), or null; when several
                  labelled ranks print a table, the rows of the first one's are read
Lines that are none of these (MPI help messages, SHARP INFO, NCCL INFO, "--(snip)--")
are skipped, also when they are interleaved with the table by other ranks.
Lenient mode (a pasted fragment): rows without their column header are read with
the standard columns of their count (13: size count type redop root + 2 x time algbw
busbw #wrong; 12: the old layout without root and with a float error column).
"""

from __future__ import annotations

import re

from ._hosttext import fail, float_or_none, int_or_none, lines_of, split_rank_label
from .base import Gaps, ParseError, Parser, Record, strict_gaps

_COMMON = ("size", "count", "type", "redop", "root")
_RANK = re.compile(
    r"^#\s+Rank\s+(?P<rank>\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(?P<host>\S+)\s+"
    r"device\s+(?P<device>\d+)\s+\[(?P<bus>[^\]]+)\]\s+(?P<gpu>.+?)\s*$"
)
_PARAMS = re.compile(r"(\w+(?: iters)?):\s+(\S+)")
_ROW = re.compile(r"^\d+\s+\d+\s+[A-Za-z]\w*\s")
# The standard columns, by the number of cells of a row (for rows pasted without their header).
_DEFAULT_COLUMNS = {
    13: (["size", "count", "type", "redop", "root"], ["time_us", "algbw", "busbw", "wrong"]),
    12: (["size", "count", "type", "redop"], ["time_us", "algbw", "busbw", "error"]),
}


def _unlabel(line: str, seen: set[str]) -> tuple[str, str | None]:
    line, kind, rank = split_rank_label(line)
    if kind:
        seen.add(kind)
    return line, rank


def _columns(header: str) -> tuple[list[str], list[str]]:
    """'#  size count type redop root time algbw busbw #wrong time ...' -> common, per-placement."""
    words = header.lstrip("#").split()
    common = [w for w in words if w in _COMMON]
    placement = words[len(common) :]
    half = len(placement) // 2
    if (
        len(placement) % 2
        or placement[:half] != placement[half:]
        or "busbw" not in placement[:half]
        or "size" not in common
    ):
        raise ParseError(f"nccl-tests: unexpected column header {header.strip()!r}")
    return common, [{"#wrong": "wrong", "time": "time_us"}.get(w, w) for w in placement[:half]]


def _cell(name: str, text: str) -> object:
    if name == "wrong":
        return int_or_none(text)
    if name in ("type", "redop"):
        return text
    if name in ("size", "count", "root"):
        value = int_or_none(text)
        if value is None:
            raise ValueError(text)
        return value
    value = float_or_none(text)
    if value is None and text != "N/A":
        raise ValueError(text)
    return value


def parse_nccl_tests(text: str, *, gaps: Gaps | None = None) -> Record:
    gaps = strict_gaps(gaps, "nccl-tests")
    labels: set[str] = set()
    labelled = [_unlabel(line, labels) for line in lines_of(text)]
    # Every rank of a job built without MPI prints its own table: read the table of the
    # rank whose column header comes first, skip the other ranks' lines.
    owner = next(
        (rank for line, rank in labelled if "busbw" in line.split() and line.lstrip().startswith("#")), None
    )
    lines = [line for line, rank in labelled if owner is None or rank in (None, owner)]
    common: list[str] | None = None
    placement: list[str] = []
    rows: list[Record] = []
    record: Record = {
        "collective": None,
        "nccl_version": None,
        "tests_version": None,
        "ranks": [],
        "params": {},
        "avg_busbw": None,
        "out_of_bounds": None,
        "out_of_bounds_ok": None,
        "complete": False,
    }
    for line in lines:
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            _comment(s, record)
            if "size" in s.split() and "busbw" in s.split():
                common, placement = _columns(s)
            continue
        if s.startswith("NCCL version"):
            record["nccl_version"] = s.split()[2] if len(s.split()) > 2 else None
            continue
        if not _ROW.match(s):
            continue  # MPI / SHARP / NCCL INFO / snip noise around the table
        fields = s.split()
        if common is None:
            if not gaps.lenient or len(fields) not in _DEFAULT_COLUMNS:
                continue
            gaps.missing("the column header '#  size  count  type ... busbw' (standard columns assumed)")
            common, placement = (list(c) for c in _DEFAULT_COLUMNS[len(fields)])
        if len(fields) != len(common) + 2 * len(placement):
            raise ParseError(
                f"nccl-tests: row has {len(fields)} columns, the header has "
                f"{len(common) + 2 * len(placement)}: {s[:80]!r}"
            )
        try:
            row: Record = {name: _cell(name, v) for name, v in zip(common, fields)}
            row.setdefault("root", None)
            n = len(common)
            for key, chunk in (
                ("out_of_place", fields[n : n + len(placement)]),
                ("in_place", fields[n + len(placement) :]),
            ):
                row[key] = {name: _cell(name, v) for name, v in zip(placement, chunk)}
        except ValueError as bad:
            raise ParseError(f"nccl-tests: unreadable value {bad} in row {s[:80]!r}") from None
        rows.append(row)
    if common is None:
        fail("nccl-tests output with the '#  size  count  type ... busbw' header", text)
    if not rows:
        raise ParseError(
            "nccl-tests: the column header is there but no result rows follow "
            "(the test failed before its first size?)"
        )
    if gaps.lenient and not record["complete"]:
        gaps.missing("the '# Avg bus bandwidth' footer (the run or the paste stops before it)")
    record["rank_labels"] = "mpirun" if "mpirun" in labels else ("srun" if labels else None)
    largest = max(rows, key=lambda r: r["size"])
    busbws = [
        r[p]["busbw"] for r in rows for p in ("out_of_place", "in_place") if r[p].get("busbw") is not None
    ]
    record.update(
        {
            "rows": rows,
            "row_count": len(rows),
            "busbw": largest["out_of_place"]["busbw"],
            "busbw_in_place": largest["in_place"]["busbw"],
            "max_busbw": max(busbws) if busbws else None,
            "largest_size": largest["size"],
            "wrong_total": sum(r[p].get("wrong") or 0 for r in rows for p in ("out_of_place", "in_place")),
            "rank_count": len(record["ranks"]),
        }
    )
    return record


def _comment(s: str, record: Record) -> None:
    body = s.lstrip("#").strip()
    m = _RANK.match(s)
    if m:
        record["ranks"].append(
            {
                "rank": int(m["rank"]),
                "host": m["host"],
                "device": int(m["device"]),
                "bus_id": m["bus"],
                "gpu": m["gpu"],
            }
        )
    elif body.startswith("Avg bus bandwidth"):
        record["avg_busbw"] = float_or_none(body.split(":", 1)[1])
        record["complete"] = True
    elif body.startswith("Out of bounds values"):
        value = body.split(":", 1)[1].split()
        record["out_of_bounds"] = int_or_none(value[0]) if value else None
        record["out_of_bounds_ok"] = len(value) > 1 and value[1] == "OK"
    elif body.startswith("Collective test starting:"):
        record["collective"] = body.split(":", 1)[1].strip()
    elif body.startswith("nccl-tests version"):
        record["tests_version"] = body.split()[2]
    elif body.startswith("nThread"):
        words = body.split()
        params = {words[0]: int_or_none(words[1])} if len(words) > 1 else {}
        for key, value in _PARAMS.findall(body):
            params[key.replace(" ", "_")] = int_or_none(value) if int_or_none(value) is not None else value
        for key, value in re.findall(r"(nGpus|minBytes|maxBytes) (\d+)", body):
            params[key] = int(value)
        record["params"] = params


PARSERS = [
    Parser(
        name="nccl-tests",
        reads="all_reduce_perf / *_perf from nccl-tests",
        func=parse_nccl_tests,
        lenient=True,
        description="nccl-tests table (rank-prefixed too): per-size algbw/busbw, #wrong, avg busbw, ranks",
    )
]
