"""`systemctl status UNIT` (parser `systemctl-status`) and `systemctl status irqbalance`
(parser `irqbalance`: the same record, refusing another unit's status).

Record:
  unit:          "irqbalance.service"; description: "irqbalance daemon" (null if no header)
  loaded:        "loaded" | "not-found" | "masked" ... ("Unit X could not be found." alone reads
                 as loaded "not-found", enabled false, active false: the unit is not installed)
  unit_file:     "/usr/lib/systemd/system/irqbalance.service" | null
  enabled:       True for "enabled", False for "disabled"/"masked", null otherwise
  unit_file_state: the word as printed ("enabled", "disabled", "static", "masked", ...)
  preset:        "enabled" | "disabled" | null (old systemd says "vendor preset:", new "preset:")
  active:        True only for "active"; active_state: "active" | "inactive" | "failed" | ...
  sub_state:     "running" | "dead" | "exited" | ...
  since:         the text after "since" up to ";" | null
  main_pid:      int | null
  command:       the first process command line of the CGroup tree | null
  journal:       the journal lines printed after the status block
Both layouts are read: systemd 219 (3-space key indent, "vendor preset:") and
systemd 249+ (5-space indent, "preset:", "○" for an inactive unit).
"""

from __future__ import annotations

import re

from ._hosttext import fail, int_or_none, lines_of
from .base import ParseError, Parser, Record

_HEAD = re.compile(
    r"^\s*[●○×*↻]?\s*(?P<unit>\S+\.(?:service|socket|timer|target|mount))(?:\s+-\s+(?P<desc>.*))?$"
)
_KEY = re.compile(
    r"^\s*(?P<key>Loaded|Active|Docs|Main PID|Process|Tasks|Memory|CPU|CGroup|TriggeredBy|"
    r"Status|IP|IO|Drop-In|Invocation|Trigger|Triggers|Mem peak|Listen|Accepted|Connected)"
    r":\s*(?P<value>.*)$"
)
_LOADED = re.compile(r"^(?P<loaded>[\w-]+)(?:\s+\((?P<inner>[^)]*)\))?")
_ACTIVE = re.compile(r"^(?P<state>[\w-]+)(?:\s+\((?P<sub>[^)]*)\))?(?:\s+since\s+(?P<since>[^;]+))?")
_JOURNAL = re.compile(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d |^\d{4}-\d\d-\d\dT")


_NOT_FOUND = re.compile(r"^\s*Unit (?P<unit>\S+?)\.? could not be found\.?\s*$")


def parse_systemd_status(text: str) -> Record:
    record: Record = {
        "unit": None,
        "description": None,
        "loaded": None,
        "unit_file": None,
        "enabled": None,
        "unit_file_state": None,
        "preset": None,
        "active": None,
        "active_state": None,
        "sub_state": None,
        "since": None,
        "main_pid": None,
        "command": None,
        "journal": [],
    }
    in_cgroup = False
    for line in lines_of(text):
        line = line.rstrip()
        if not line:
            in_cgroup = False
            continue
        if record["unit"] is None and (m := _HEAD.match(line)) and ":" not in line.split()[0]:
            record["unit"], record["description"] = m["unit"], m["desc"]
            continue
        if _JOURNAL.match(line):
            record["journal"].append(line.strip())
            in_cgroup = False
            continue
        m = _KEY.match(line)
        if m:
            in_cgroup = m["key"] == "CGroup"
            _field(record, m["key"], m["value"].strip())
        elif in_cgroup and record["command"] is None:
            proc = re.match(r"^\s*[└├│─`|-]*\s*(\d+)\s+(.*)$", line)
            if proc:
                record["command"] = proc.group(2).strip()
    lines = [ln for ln in lines_of(text) if ln.strip()]
    if record["active_state"] is None and len(lines) == 1 and (m := _NOT_FOUND.match(lines[0])):
        # not installed: a state worth judging (irqbalance absent), not an unreadable output
        record.update(
            unit=m["unit"],
            loaded="not-found",
            enabled=False,
            active=False,
            active_state="inactive",
            sub_state="dead",
        )
        return record
    if record["active_state"] is None:
        fail("`systemctl status UNIT` output with an 'Active:' line", text)
    if record["loaded"] is None:
        raise ParseError("systemctl status: an 'Active:' line but no 'Loaded:' line (incomplete output)")
    return record


def _field(record: Record, key: str, value: str) -> None:
    if key == "Loaded":
        m = _LOADED.match(value)
        if not m:
            return
        record["loaded"] = m["loaded"]
        parts = [p.strip() for p in (m["inner"] or "").split(";") if not p.strip().startswith("Reason:")]
        if parts and parts[0].startswith("/"):
            record["unit_file"] = parts.pop(0)
        for part in parts:
            if part.startswith("vendor preset:") or part.startswith("preset:"):
                record["preset"] = part.split(":", 1)[1].strip()
            elif part and record["unit_file_state"] is None:
                record["unit_file_state"] = part
        state = record["unit_file_state"] or ("masked" if record["loaded"] == "masked" else None)
        record["unit_file_state"] = state
        record["enabled"] = {
            "enabled": True,
            "enabled-runtime": True,
            "disabled": False,
            "masked": False,
        }.get(state or "")
    elif key == "Active":
        m = _ACTIVE.match(value)
        if m:
            record["active_state"], record["sub_state"] = m["state"], m["sub"]
            record["since"] = m["since"].strip() if m["since"] else None
            record["active"] = m["state"] == "active"
    elif key == "Main PID":
        record["main_pid"] = int_or_none(value.split()[0]) if value else None


def parse_irqbalance_status(text: str) -> Record:
    record = parse_systemd_status(text)
    if record["unit"] is not None and not record["unit"].startswith("irqbalance."):
        raise ParseError(f"irqbalance: this is the status of {record['unit']}, not irqbalance.service")
    return record


PARSERS = [
    Parser(
        name="systemctl-status",
        reads="systemctl status UNIT",
        func=parse_systemd_status,
        description="systemctl status of any unit: loaded, enabled, preset, active/sub state, "
        "main PID, journal lines",
    ),
    Parser(
        name="irqbalance",
        reads="systemctl status irqbalance",
        func=parse_irqbalance_status,
        description="systemctl status irqbalance: enabled at boot, active (running) now",
    ),
]
