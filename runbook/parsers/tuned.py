"""`tuned-adm active`: the active TuneD profile.

Record:
  profile:         "realtime" | "throughput-performance" | ... | null when there is none
  profiles:        the profile words (TuneD can stack several: "Current active profile: a b")
  daemon_running:  False when tuned-adm said it cannot talk to the daemon (DBus), null otherwise
  services:        {"tuned": "disabled, stopped", "ktune": ...} from old (RHEL 6) tuned-adm
  mode:            "manual" | "auto" from "Profile selection mode: ..." (null if not printed)
  preset:          "Preset profile: ..." printed when the daemon is not running (RHEL 7) | null
"""

from __future__ import annotations

import re

from ._hosttext import fail, lines_of
from .base import Parser, Record


def parse_tuned_active(text: str) -> Record:
    record: Record = {
        "profile": None,
        "profiles": [],
        "daemon_running": None,
        "services": {},
        "mode": None,
        "preset": None,
    }
    seen = False
    for line in lines_of(text):
        s = line.strip()
        if m := re.match(r"^Current active profile:\s*(.*)$", s):
            record["profiles"] = m.group(1).split()
            record["profile"] = m.group(1).strip() or None
            seen = True
        elif s.startswith("No current active profile"):
            seen = True
        elif s.startswith("Cannot talk to TuneD daemon") or s.startswith("Cannot talk to Tuned daemon"):
            record["daemon_running"] = False
        elif s.startswith("It seems that tuned daemon is not running"):
            # tuned-adm of RHEL 7 with the daemon stopped: only the preset is shown
            record["daemon_running"] = False
            seen = True
        elif m := re.match(r"^Preset profile:\s*(\S+)", s):
            record["preset"] = m.group(1)
        elif m := re.match(r"^Service (\w+):\s*(.*)$", s):
            record["services"][m.group(1)] = m.group(2).strip()
        elif m := re.match(r"^Profile selection mode:\s*(\w+)", s):
            record["mode"] = m.group(1)
    if not seen:
        fail(
            "`tuned-adm active` output ('Current active profile: ...' or 'No current active profile.')", text
        )
    return record


PARSERS = [
    Parser(
        name="tuned",
        reads="tuned-adm active",
        func=parse_tuned_active,
        description="tuned-adm active: the active TuneD profile, daemon reachable or not",
    )
]
