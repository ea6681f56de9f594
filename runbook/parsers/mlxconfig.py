"""`mlxconfig -d DEV q [PARAMS]`, `mlxconfig -e q` and `mlxconfig ... set` output.

The value columns depend on the command: plain query prints one column
("Next Boot"), `-e` prints Default / Current / Next Boot, `set` prints
Next Boot / New. `configurations` holds the value that is in force now when the
output shows it (Current), otherwise the only value column printed (Next Boot);
every column is also kept under its own name (`default`, `current`,
`next_boot`). The parameters are copied flat at the top level too, so a step
can check `{path: LINK_TYPE_P1, eq: "IB(1)"}`. Values never contain spaces,
which is what makes over-long values such as `DEVICE_DEFAULT(0)` splittable
even when they overflow mlxconfig's 16-character columns.
"""

from __future__ import annotations

import re

from ._ib_common import bad_line, not_recognised, numbered
from .base import ParseError, Parser, Record

TOOL = "mlxconfig"
_COLUMN_KEYS = {"Default": "default", "Current": "current", "Next Boot": "next_boot", "New": "new"}
_DEVICE = re.compile(r"^Device #(\d+):$")
_INFO = re.compile(r"^(Device type|Name|Description|Device|PCI device):\s*(.*)$")
_CONFIG_HEADER = re.compile(r"^Configurations:\s*(.*)$")
# indented (or "*"-marked) upper-case words joined by "_"; a few have a lower-case
# segment: EXP_ROM_UEFI_x86_ENABLE
_PARAM = re.compile(r"^(?:\s+|\s*(\*)\s*)([A-Z][A-Z0-9]*(?:_[A-Za-z0-9]+)*(?:\[[0-9.]+\])?)\s+(\S.*)$")
_MESSAGE = re.compile(r"^\s*-([IWE])-\s*(.*)$")
_NOISE = re.compile(r"^(-+|The '\*' shows parameters.*|Applying\.\.\.\s*Done!?|Aborted by user.*)$")
_PROMPT = re.compile(r"^\s*Apply new Configuration\?.*?:\s*(\w*)\s*$")
_INFO_KEYS = {
    "Device type": "device_type",
    "Name": "name",
    "Description": "description",
    "Device": "device",
    "PCI device": "device",
}
# Without a header (a pasted fragment) the column count says which layout it is.
_IMPLIED_COLUMNS = {1: ["Next Boot"], 3: ["Default", "Current", "Next Boot"]}


def _new_device() -> Record:
    return {
        "device": None,
        "device_type": None,
        "name": None,
        "description": None,
        "columns": None,
        "rows": [],
        "modified": [],
    }


def _header_columns(rest: str) -> list[str]:
    return re.findall(r"Next Boot|Default|Current|New", rest)


def _finish(dev: Record) -> Record:
    columns = dev["columns"] or _IMPLIED_COLUMNS.get(len(dev["rows"][0][1]) if dev["rows"] else 0)
    if dev["rows"] and columns is None:
        raise ParseError(f"{TOOL}: cannot tell the value columns (found {len(dev['rows'][0][1])} per row)")
    out = {k: dev[k] for k in ("device", "device_type", "name", "description", "modified")}
    out["columns"] = columns or []
    per_column: dict[str, dict[str, str]] = {c: {} for c in out["columns"]}
    for lineno, values, param in dev["rows"]:
        if len(values) != len(columns):
            raise ParseError(
                f"{TOOL}: line {lineno}: {param} has {len(values)} values, "
                f"expected {len(columns)} ({' / '.join(columns)})"
            )
        for column, value in zip(columns, values):
            per_column[column][param] = value
    for column, values in per_column.items():
        out[_COLUMN_KEYS[column]] = values
    primary = "Current" if "Current" in per_column else ("Next Boot" if "Next Boot" in per_column else None)
    out["configurations"] = dict(per_column[primary]) if primary else {}
    if "current" in out and "next_boot" in out:
        out["pending_reboot"] = sorted(p for p, v in out["next_boot"].items() if out["current"].get(p) != v)
    if "new" in out:
        before = out.get("next_boot", {})
        out["pending_changes"] = {p: {"from": before.get(p), "to": v} for p, v in out["new"].items()}
    return out


def parse(text: str) -> Record:
    devices: list[Record] = []
    current = _new_device()
    messages: dict[str, list[str]] = {"I": [], "W": [], "E": []}
    confirmed = None
    applied = aborted = False
    for lineno, line in numbered(text):
        stripped = line.strip()
        if not stripped:
            continue
        if m := _DEVICE.match(stripped):
            if current["rows"] or current["device"] or current["device_type"]:
                devices.append(current)
            current = _new_device()
        elif m := _INFO.match(stripped):
            current[_INFO_KEYS[m.group(1)]] = m.group(2).strip() or None
        elif m := _CONFIG_HEADER.match(stripped):
            current["columns"] = _header_columns(m.group(1))
            if not current["columns"]:
                raise bad_line(TOOL, lineno, "value column names after 'Configurations:'", line)
        elif m := _MESSAGE.match(line):
            messages[m.group(1)].append(m.group(2).strip())
        elif m := _PROMPT.match(line):
            confirmed = m.group(1).lower().startswith("y")
        elif _NOISE.match(stripped):
            applied = applied or stripped.startswith("Applying")
            aborted = aborted or stripped.startswith("Aborted")
        elif m := _PARAM.match(line):
            if m.group(1):
                current["modified"].append(m.group(2))
            current["rows"].append((lineno, m.group(3).split(), m.group(2)))
        else:
            raise bad_line(TOOL, lineno, "a 'PARAM  value...' row or an mlxconfig header line", line)
    if current["rows"] or current["device"] or current["device_type"]:
        devices.append(current)
    if not any(d["rows"] for d in devices):
        if messages["E"]:
            raise ParseError(f"{TOOL}: the tool reported an error: {messages['E'][0]}")
        raise not_recognised(TOOL, "mlxconfig query/set output with 'PARAM  value' rows", text)
    finished = [_finish(d) for d in devices]
    record: Record = dict(finished[0])
    record["devices"] = finished
    record["errors"] = messages["E"]
    record["warnings"] = messages["W"]
    record["info"] = messages["I"]
    if "new" in record:
        record["confirmed"] = confirmed
        record["applied"] = applied and not aborted
        record["reboot_required"] = any("reboot" in m.lower() for m in messages["I"])
    for param, value in record["configurations"].items():
        record.setdefault(param, value)
    return record


PARSERS = [
    Parser(
        name="mlxconfig",
        reads="mlxconfig -d DEV query|set ...",
        func=parse,
        keeps_indent=True,
        description="firmware configuration parameters: current, default and next-boot values per device",
    )
]
