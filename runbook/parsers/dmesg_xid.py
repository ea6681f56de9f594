"""NVIDIA Xid events from the kernel log (`dmesg`, `dmesg -T`, `dmesg --time-format iso`,
`dmesg --decode`, `journalctl -k`, /var/log/messages, or a single pasted line).

Record:
  events: [{xid (int), pci ("0000:19:00", as the driver prints it), pid (int | null:
            absent or '<unknown>'), name (process name | null), message (the text after
            pid/name), timestamp (as printed | null), timestamp_style ("seconds" for
            "[24128.828315]", "ctime" for "[Fri Aug 30 11:43:09 2024]", "iso" for
            "2024-11-15T12:02:03,470068+00:00", "syslog" for "Nov 15 12:02:03 host kernel:",
            "delta" / "human" for `dmesg -H` "[  +0.000094]" / "[Nov15 12:02]",
            null when the line has none), level ("warn" from `--decode`, else null),
            known (bool), meaning (str | null), action (str | null)}]
  count, xids (sorted distinct numbers), by_xid {"48": 1, ...}, by_pci {"0000:19:00": [48, 63, 94]}
  unknown_xids: the distinct numbers not in KNOWN_XIDS
  other_lines: how many non-Xid lines were skipped (peermem noise, other drivers)
An input with no Xid line and nothing else is refused; kernel log text without any
Xid line is a valid reading with count 0 only when it has kernel-log timestamps
(a clean `dmesg`), anything else is refused.

KNOWN_XIDS: the Xids a GPU cluster delivery meets, with their meaning and the usual
action. Each meaning starts with the Description of the NVIDIA Xid Errors catalog
(docs.nvidia.com/deploy/xid-errors, "Analyzing Xid Errors with the Xid Catalog"),
the action follows its Resolution Buckets (RESTART_APP, RESET_GPU, RESTART_BM, ...).
"""

from __future__ import annotations

import re

from ._hosttext import fail, lines_of
from .base import Parser, Record

KNOWN_XIDS: dict[int, tuple[str, str]] = {
    13: (
        "Graphics Engine Exception (SM warp/global exception, illegal address or instruction)",
        "usually the application; if it repeats across jobs, run dcgmi diag",
    ),
    31: (
        "GPU memory page fault (MMU fault: illegal access by an application or driver)",
        "usually the application; if it repeats across jobs, run dcgmi diag",
    ),
    32: ("Invalid or corrupted push buffer stream", "check PCIe / system memory; driver bug report"),
    43: (
        "GPU stopped processing (the channel of a faulting application was reset)",
        "application fault; the GPU stays usable",
    ),
    45: ("Preemptive cleanup, due to a previous error (often a killed process)", "follows another Xid"),
    48: (
        "Double Bit ECC Error (DBE), an uncorrectable memory error",
        "reset the GPU (row remapping / page retirement follows); replace if it recurs",
    ),
    63: (
        "ECC page retirement or row remapping recording event (pending until the GPU is reset)",
        "drain and reset the GPU to activate the remap",
    ),
    64: (
        "ECC page retirement or row remapper recording failure",
        "reset the GPU; if `nvidia-smi -q -d ROW_REMAPPER` shows a remapping failure, RMA the GPU",
    ),
    74: ("NVLink Error", "check the NVLink state (nvidia-smi nvlink -s); reset the GPU; RMA if it recurs"),
    79: (
        "GPU has fallen off the bus",
        "reboot the node (a GPU reset cannot reach it); check the slot, riser and power; RMA if it recurs",
    ),
    92: ("High single-bit ECC error rate", "watch the ECC counters; RMA if the rate persists"),
    94: (
        "Contained ECC error (only the affected application was stopped)",
        "restart the affected application; reset the GPU when it is idle (the row remap waits for it)",
    ),
    95: (
        "Uncontained ECC error (every application on the GPU was stopped)",
        "reset the GPU now; RMA if it recurs",
    ),
    109: ("Context switch timeout", "application or driver; check for other Xids"),
    119: (
        "GSP RPC Timeout (the GPU System Processor firmware stopped answering)",
        "reset the GPU; update the driver; RMA if it recurs",
    ),
    120: ("GSP error", "reset the GPU; update the driver"),
}

_XID = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.\d)?)\):"
    r"\s*(?P<xid>\d+)\s*,\s*(?P<rest>.*)$"
)
_PID = re.compile(r"^pid=(?P<q>'?)(?P<pid><unknown>|\d+)(?P=q)\s*,\s*")
_NAME = re.compile(r"^name=(?P<name>[^,]*?)\s*,\s*")
_STAMPS = (
    ("seconds", re.compile(r"\[\s*(\d+\.\d+)\]")),
    ("delta", re.compile(r"\[\s*(\+\d+\.\d+)\]")),  # dmesg -H / --reltime
    ("human", re.compile(r"\[([A-Z][a-z]{2}\s?\d{1,2} \d\d:\d\d(?::\d\d)?)\]")),  # dmesg -H
    ("ctime", re.compile(r"\[([A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})\]")),
    ("iso", re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[,.]\d+)?(?:[+-]\d\d:?\d\d|Z)?)")),
    ("syslog", re.compile(r"^([A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)?) \S+ kernel:")),
)
_LEVEL = re.compile(r"^\s*kern\s*:\s*(\w+)\s*:")


def _stamp(prefix: str) -> tuple[str | None, str | None]:
    for style, pattern in _STAMPS:
        m = pattern.search(prefix)
        if m:
            return m.group(1), style
    return None, None


def _event(prefix: str, m: re.Match) -> Record:
    rest = m["rest"].strip()
    pid = name = None
    if p := _PID.match(rest):
        pid = int(p["pid"]) if p["pid"].isdigit() else None
        rest = rest[p.end() :]
        if n := _NAME.match(rest):
            name = n["name"] if n["name"] not in ("<unknown>", "") else None
            rest = rest[n.end() :]
    timestamp, style = _stamp(prefix)
    level = _LEVEL.match(prefix)
    xid = int(m["xid"])
    meaning, action = KNOWN_XIDS.get(xid, (None, None))
    return {
        "xid": xid,
        "pci": m["pci"],
        "pid": pid,
        "name": name,
        "message": rest.strip(),
        "timestamp": timestamp,
        "timestamp_style": style,
        "level": level.group(1) if level else None,
        "known": xid in KNOWN_XIDS,
        "meaning": meaning,
        "action": action,
    }


def parse_dmesg_xid(text: str) -> Record:
    events: list[Record] = []
    other = 0
    stamped = 0
    for line in lines_of(text):
        if not line.strip():
            continue
        m = _XID.search(line)
        if m:
            events.append(_event(line[: m.start()], m))
            continue
        other += 1
        if _stamp(line[:48])[1] is not None:
            stamped += 1
    if not events and (other == 0 or stamped < other):
        fail("kernel log lines ('NVRM: Xid (PCI:0000:19:00): 48, ...' or timestamped dmesg lines)", text)
    by_xid: dict[str, int] = {}
    by_pci: dict[str, list[int]] = {}
    for e in events:
        by_xid[str(e["xid"])] = by_xid.get(str(e["xid"]), 0) + 1
        seen = by_pci.setdefault(e["pci"], [])
        if e["xid"] not in seen:
            seen.append(e["xid"])
    xids = sorted({e["xid"] for e in events})
    return {
        "events": events,
        "count": len(events),
        "xids": xids,
        "by_xid": by_xid,
        "by_pci": by_pci,
        "unknown_xids": [x for x in xids if x not in KNOWN_XIDS],
        "other_lines": other,
    }


PARSERS = [
    Parser(
        name="dmesg-xid",
        reads="dmesg [-T|--time-format iso] | journalctl -k (NVRM: Xid lines)",
        func=parse_dmesg_xid,
        description="NVIDIA Xid events from the kernel log: Xid, PCI address, pid/name, message, "
        "meaning of the known Xids",
    )
]
