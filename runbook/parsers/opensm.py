"""The subnet manager as seen from outside and from its own log:
`sminfo` (infiniband-diags) and OpenSM's log (opensm.log, its stdout with
`-f -`, syslog lines, or a grep of any of them).
"""

from __future__ import annotations

import re

from ._ib_common import guid, lines_of, not_recognised, number
from .base import Parser, Record

# --- sminfo ------------------------------------------------------------------
_SMINFO = re.compile(
    r"^sminfo: sm lid (\S+) sm guid (\S+), activity count (\d+) priority (\d+)"
    r"(?: state (\d+) (\S+))?\s*$"
)
_SMINFO_FAILED = re.compile(r"^sminfo: iberror: (.*)$")
_SM_STATES = {0: "NOTACTIVE", 1: "DISCOVERING", 2: "STANDBY", 3: "MASTER"}


def parse_sminfo(text: str) -> Record:
    found = [line.strip() for line in lines_of(text) if line.strip()]
    for line in found:
        if m := _SMINFO.match(line):
            state_num = int(m.group(5)) if m.group(5) else None
            state = m.group(6)
            return {
                "sm_running": True,
                "sm_lid": number(m.group(1)),
                "sm_guid": guid(m.group(2)),
                "activity": int(m.group(3)),
                "priority": int(m.group(4)),
                # old infiniband-diags print no state: left None, never guessed
                "state": state,
                "state_num": state_num,
                "state_short": state.removeprefix("SMINFO_") if state else None,
            }
        if m := _SMINFO_FAILED.match(line):
            # what sminfo prints when no SM answers: a fact, not a parse failure
            return {
                "sm_running": False,
                "error": m.group(1),
                "sm_lid": None,
                "sm_guid": None,
                "activity": None,
                "priority": None,
                "state": None,
                "state_num": None,
                "state_short": None,
            }
    raise not_recognised("sminfo", "'sminfo: sm lid N sm guid 0x... activity count N priority N ...'", text)


# --- OpenSM log ----------------------------------------------------------------
_NATIVE = re.compile(r"^(\w{3} [ \d]\d \d\d:\d\d:\d\d) \d+ \[[0-9A-Fa-f]+\] (0x[0-9A-Fa-f]{2}) -> (.*)$")
_SYSLOG = re.compile(r"^(\w{3} [ \d]\d \d\d:\d\d:\d\d) \S+ OpenSM\[\d+\]: (.*)$")
_STATE = re.compile(r"Entering (\w+) state")
_PRIORITY = re.compile(r"^\s*(?:SM )?[Pp]riority\s*[=:]\s*(\d+)\s*$")
_ERROR = re.compile(r"\bERR ([0-9A-Fa-f]{4}):\s*(.*)")
_VERSION = re.compile(r"^OpenSM (\d[\w.\-]*)\s*$")
_ROUTING = re.compile(r"(\w+) tables configured on all switches")
_FABRIC = re.compile(r"Fabric has (\d+) CAs, (\d+) CA ports.*?, (\d+) switches")
_SM_GUID = re.compile(r"(?:Using default GUID|Bind to port guid) (0x[0-9a-fA-F]+)")


def _message(line: str) -> tuple[str | None, str | None, str]:
    """(time, log level, message) of one log line; bare lines are grep output."""
    if m := _NATIVE.match(line):
        return m.group(1), m.group(2), m.group(3)
    if m := _SYSLOG.match(line):
        return m.group(1), None, m.group(2)
    return None, None, line


def parse_opensm_log(text: str) -> Record:
    states, errors, subnet_up = [], [], []
    priority = version = sm_guid = routing = fabric = None
    port_down = 0
    opensm_lines = 0
    for lineno, raw in enumerate(lines_of(text), 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        when, level, msg = _message(line)
        msg = re.sub(r"(#012)+$", "", msg).rstrip()  # rsyslog's escaped newline
        known = when is not None
        if m := _STATE.search(msg):
            states.append({"state": m.group(1), "time": when, "line": lineno})
            known = True
        if msg.endswith("SUBNET UP"):
            subnet_up.append({"time": when, "line": lineno})
            known = True
        if m := _PRIORITY.match(msg):
            priority, known = int(m.group(1)), True
        if m := _VERSION.match(msg):
            version = m.group(1)
        if m := _SM_GUID.search(msg):
            sm_guid = guid(m.group(1))
        if m := _ROUTING.search(msg):
            routing = m.group(1)
        if m := _FABRIC.search(msg):
            fabric = {"cas": int(m.group(1)), "ca_ports": int(m.group(2)), "switches": int(m.group(3))}
        if "SM port is down" in msg:
            port_down += 1
        if (m := _ERROR.search(msg)) or level == "0x01":
            errors.append(
                {
                    "code": m.group(1).upper() if m else None,
                    "message": (m.group(2) if m else msg).strip(),
                    "line": lineno,
                }
            )
        opensm_lines += known
    if not opensm_lines:
        raise not_recognised(
            "opensm-log",
            "OpenSM log lines ('... [THREAD] 0x02 -> ...', "
            "'OpenSM[pid]: ...', 'Entering MASTER state', 'SUBNET UP')",
            text,
        )
    return {
        "states": states,
        "state": states[-1]["state"] if states else None,
        "priority": priority,
        "subnet_up": bool(subnet_up),
        "subnet_up_count": len(subnet_up),
        "errors": errors,
        "error_count": len(errors),
        "sm_port_down_count": port_down,
        "version": version,
        "sm_guid": sm_guid,
        "routing_engine": routing,
        "fabric": fabric,
    }


PARSERS = [
    Parser(
        name="sminfo",
        reads="sminfo",
        func=parse_sminfo,
        description="the master SM: LID, GUID, activity count, priority, state",
    ),
    Parser(
        name="opensm-log",
        reads="opensm log / stdout / syslog (or a grep of it)",
        func=parse_opensm_log,
        description="OpenSM log events: SM state changes (MASTER/STANDBY), SUBNET UP, errors",
    ),
]
