"""`dcgmi diag -r N` (the table, DCGM 2.x .. 4.x layouts) and `dcgmi diag -r N -j` (JSON).

Record:
  format:         "table" | "json"
  layout:         "dcgm4" (per-GPU rows "GPU0: Pass" / lower-case plugin names, DCGM 4.x) or
                  "classic" (DCGM 2.x-3.x: "Blacklist"/"Denylist", "Pass - All", "Fail - GPU: 0, 1";
                  3.x prints the Metadata section too)
  dcgm_version, driver_version (null when not printed), gpu_device_ids: ["25b6", ...]
  tests: [{category ("Deployment" | "Hardware" | "Integration" | "Stress" | ...),
           name (as printed: "Memory Bandwidth", "memory_bandwidth"),
           result ("Pass" | "Fail" | "Warn" | "Skip" | "Not Run" | ...: the first word(s)),
           result_text (the whole cell: "Pass - All", "Fail - GPU: 3"),
           gpus: {"0": "Pass", ...} (per-GPU results when printed),
           failed_gpus: [ints] (from "Fail - GPU: 0, 1" or the per-GPU rows),
           messages: [{level: "error" | "warning" | "info", gpu (int | null), text}]}]
  messages:       messages printed outside any test (an "Error" row right after a section line)
  failed_tests, warned_tests: names; ok: no test failed and no error message was printed
  complete:       the table's closing border was reached (always true for JSON)
Wrapped message cells (continuation rows) are joined as dcgmi cut them: with a space where the
cut fell between words, without one where it fell inside a word.
Lenient mode (a pasted fragment): a table without its closing border is read.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ._hosttext import fail, int_or_none, lines_of
from .base import Gaps, ParseError, Parser, Record, strict_gaps

_SECTION = re.compile(r"^[|+]-+\s+(?P<name>[A-Za-z][\w /]*?)\s+-+\+[-+|]*$")
_ROW = re.compile(r"^\|(?P<name>[^|]*)\|(?P<value>.*)\|\s*$")
_GPU_RESULT = re.compile(r"^GPU\s?(?P<gpu>\d+)\s*:\s*(?P<result>\S.*)$")
_MESSAGE = re.compile(r"^(?P<level>Error|Warning|Info)\s*:\s*(?P<text>.*)$", re.I)
_RESULT = re.compile(
    r"^(?P<result>Pass|Fail|Warn|Skip|Not Run|Skipped|Error|Incomplete)\b(?P<rest>.*)$", re.I
)
_MESSAGE_NAMES = {"error": "error", "warning": "warning", "info": "info"}
_META = {
    "DCGM Version": "dcgm_version",
    "Driver Version Detected": "driver_version",
    "GPU Device IDs Detected": "gpu_device_ids",
}


def _gpu_of(text: str) -> int | None:
    m = re.search(r"\bGPU\s?(\d+)\b", text)
    return int(m.group(1)) if m else None


def _failed_from_text(text: str) -> list[int]:
    m = re.search(r"GPUs?\s*:\s*([\d,\s]+)", text)
    return [int(x) for x in re.findall(r"\d+", m.group(1))] if m else []


def _test(category: str | None, name: str, cell: str) -> Record:
    m = _RESULT.match(cell)
    result = m.group("result").title() if m else cell.split(" - ")[0].strip() or None
    failed = _failed_from_text(cell) if result in ("Fail", "Warn") else []
    return {
        "category": category,
        "name": name,
        "result": result,
        "result_text": cell,
        "gpus": {},
        "failed_gpus": failed,
        "messages": [],
    }


def _parse_table(text: str, gaps: Gaps) -> Record:
    record: Record = {
        "format": "table",
        "layout": "classic",
        "dcgm_version": None,
        "driver_version": None,
        "gpu_device_ids": [],
        "tests": [],
        "messages": [],
        "complete": False,
    }
    category: str | None = None
    current: Record | None = None  # the test the next continuation rows belong to
    last_message: Record | None = None  # a wrapped message continues here
    header = False
    for raw in lines_of(text):
        line = raw.strip()
        if not line:
            continue
        if re.match(r"^\|\s*Diagnostic\s*\|\s*Result\s*\|$", line):
            header = True
            continue
        if m := _SECTION.match(line):
            category = m["name"].strip()
            current = last_message = None
            continue
        if re.fullmatch(r"\+[-=+]+\+", line):
            if (
                header
                and line.startswith("+---")
                and "=" not in line
                and record["tests"] + record["messages"]
            ):
                record["complete"] = True
            continue
        m = _ROW.match(line)
        if not m:
            continue
        name, cell = m["name"].strip(), m["value"].strip()
        if category == "Metadata" and name in _META:
            key = _META[name]
            record[key] = [x.strip() for x in cell.split(",")] if key == "gpu_device_ids" else cell
            continue
        if name.lower() in _MESSAGE_NAMES:  # classic: "| Warning | GPU 0 ..." / "| Error | ..."
            last_message = {"level": _MESSAGE_NAMES[name.lower()], "gpu": _gpu_of(cell), "text": cell}
            (current["messages"] if current else record["messages"]).append(last_message)
            continue
        if name:
            current = _test(category, name, cell)
            last_message = None
            record["tests"].append(current)
            continue
        # a continuation row: a per-GPU result, a message, or the wrapped end of a message
        if (g := _GPU_RESULT.match(cell)) and current is not None:
            record["layout"] = "dcgm4"
            current["gpus"][g["gpu"]] = g["result"].strip()
            if g["result"].strip().lower().startswith("fail") and int(g["gpu"]) not in current["failed_gpus"]:
                current["failed_gpus"].append(int(g["gpu"]))
            last_message = None
        elif mm := _MESSAGE.match(cell):
            last_message = {
                "level": mm["level"].lower(),
                "gpu": _gpu_of(mm["text"]),
                "text": mm["text"].strip(),
            }
            (current["messages"] if current else record["messages"]).append(last_message)
        elif last_message is not None and cell:
            # dcgmi wraps a long cell at a fixed width, also inside a word: a continuation
            # that starts with a space beyond the cell's one-space padding begins a new word.
            joint = " " if m["value"].startswith("  ") else ""
            last_message["text"] = f"{last_message['text']}{joint}{cell}".strip()
    if not header:
        fail("the `dcgmi diag` table ('| Diagnostic | Result |')", text)
    if not record["tests"] and not record["messages"]:
        raise ParseError("dcgmi-diag: the table header is there but no test rows follow")
    if any(t["name"][:1].islower() for t in record["tests"]):
        record["layout"] = "dcgm4"
    if not record["complete"]:
        gaps.missing("the table's closing border (the output was cut)")
    return record


def _status(value: Any) -> str | None:
    return str(value).strip().title() if value not in (None, "") else None


def _parse_json(data: Any) -> Record:
    if not isinstance(data, dict):
        raise ParseError("dcgmi-diag: the JSON is not an object")
    body = data.get("DCGM Diagnostic") or data.get("DCGM GPU Diagnostic")
    if not isinstance(body, dict) or not isinstance(body.get("test_categories"), list):
        raise ParseError(
            "dcgmi-diag: expected the `dcgmi diag -j` object "
            '{"DCGM Diagnostic" (or "DCGM GPU Diagnostic"): {"test_categories": [...]}}'
        )
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    ids = body.get("GPU Device IDs") or meta.get("GPU Device IDs") or []
    record: Record = {
        "format": "json",
        "layout": "dcgm4" if "DCGM Diagnostic" in data else "classic",
        "dcgm_version": meta.get("version") or body.get("version"),
        "driver_version": meta.get("Driver Version Detected") or body.get("Driver Version Detected"),
        "gpu_device_ids": [str(x) for x in ids] if isinstance(ids, list) else [],
        "tests": [],
        "messages": [],
        "complete": True,
    }
    for cat in body["test_categories"]:
        if not isinstance(cat, dict):
            raise ParseError("dcgmi-diag: a test category is not an object")
        for t in cat.get("tests") or []:
            results = t.get("results") or []
            summary = _status((t.get("test_summary") or {}).get("status"))
            test: Record = {
                "category": cat.get("category"),
                "name": t.get("name"),
                "result": summary,
                "result_text": summary,
                "gpus": {},
                "failed_gpus": [],
                "messages": [],
            }
            statuses = []
            for r in results:
                status = _status(r.get("status"))
                statuses.append(status)
                gpu = r.get("entity_id", r.get("gpu_id"))
                gpus = r.get("gpu_ids") if gpu is None else [gpu]
                if gpus is not None and r.get("entity_group", "GPU") == "GPU":
                    for g in gpus if isinstance(gpus, list) else [gpus]:
                        test["gpus"][str(g)] = status
                        if status == "Fail" and int_or_none(str(g)) is not None:
                            test["failed_gpus"].append(int(str(g)))
                one = int_or_none(str(gpu)) if gpu is not None else None
                for w in r.get("warnings") or []:
                    text = w.get("warning") if isinstance(w, dict) else str(w)
                    test["messages"].append(
                        {"level": "warning" if status != "Fail" else "error", "gpu": one, "text": text}
                    )
                for i in r.get("info") or []:
                    test["messages"].append({"level": "info", "gpu": one, "text": str(i)})
            if test["result"] is None:
                order = ("Fail", "Warn", "Pass", "Skip")
                test["result"] = next((s for s in order if s in statuses), statuses[0] if statuses else None)
                test["result_text"] = test["result"]
            record["tests"].append(test)
    return record


def parse_dcgmi_diag(text: str, *, gaps: Gaps | None = None) -> Record:
    gaps = strict_gaps(gaps, "dcgmi-diag")
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            record = _parse_json(json.loads(stripped))
        except json.JSONDecodeError as exc:
            raise ParseError(f"dcgmi-diag: the JSON does not parse: {exc}") from None
    else:
        record = _parse_table(text, gaps)
    record["failed_tests"] = [t["name"] for t in record["tests"] if t["result"] == "Fail"]
    record["warned_tests"] = [t["name"] for t in record["tests"] if t["result"] == "Warn"]
    errors = [m for t in record["tests"] for m in t["messages"] if m["level"] == "error"]
    errors += [m for m in record["messages"] if m["level"] == "error"]
    record["ok"] = not record["failed_tests"] and not errors
    return record


PARSERS = [
    Parser(
        name="dcgmi-diag",
        reads="dcgmi diag -r N [-j]",
        func=parse_dcgmi_diag,
        lenient=True,
        description="dcgmi diag results per test (and per GPU): Pass/Fail/Warn, messages, "
        "DCGM/driver versions; table or -j JSON",
    )
]
