"""`opensm.conf` (`/etc/opensm/opensm.conf`, UFM's conf/opensm/opensm.conf): "key value" lines.

Record:
  settings: {key: value as written ("ar_updn", "TRUE", "0x7fff", "8")}
  values:   {key: typed value: TRUE/FALSE -> bool, decimal -> int, else the string}
  keys:     the keys in file order (a repeated key: the last value wins, as in OpenSM)
  sm_priority, routing_engine: the two settings the SM steps read (null when absent:
            OpenSM's defaults then apply, priority 0 and routing engine minhop)
Comment ("#") and blank lines are skipped; any other line that is not "key value" (one
token each) is an error.
"""

from __future__ import annotations

import re

from ._ib_common import bad_line, not_recognised, numbered
from .base import Parser, Record

# OpenSM writes one token per value (opensm -c): "key value", nothing after it.
_LINE = re.compile(r"^(?P<key>[a-z][a-z0-9_]*)(?:\s+(?P<value>\S+))?\s*$")


def _typed(value: str):
    if value.upper() in ("TRUE", "FALSE"):
        return value.upper() == "TRUE"
    return int(value) if re.fullmatch(r"-?\d+", value) else value


def parse_opensm_conf(text: str) -> Record:
    settings: dict[str, str] = {}
    keys: list[str] = []
    for lineno, line in numbered(text):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        m = _LINE.match(s)
        if not m or m["value"] is None:
            if not settings:
                raise not_recognised(
                    "opensm-conf", "opensm.conf 'key value' lines (e.g. 'sm_priority 14')", text
                )
            raise bad_line("opensm-conf", lineno, "'key value'", line)
        if m["key"] not in settings:
            keys.append(m["key"])
        settings[m["key"]] = m["value"]
    if not settings:
        raise not_recognised("opensm-conf", "opensm.conf 'key value' lines (e.g. 'sm_priority 14')", text)
    values = {k: _typed(v) for k, v in settings.items()}
    return {
        "settings": settings,
        "values": values,
        "keys": keys,
        "sm_priority": values.get("sm_priority"),
        "routing_engine": settings.get("routing_engine"),
    }


PARSERS = [
    Parser(
        name="opensm-conf",
        reads="cat /etc/opensm/opensm.conf",
        func=parse_opensm_conf,
        description="opensm.conf settings (sm_priority, routing_engine, ...), raw and typed",
    )
]
