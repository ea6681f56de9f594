"""`systemctl show -p LoadState -p UnitFileState -p ActiveState UNIT`: one
`Property=value` line per property, in systemd's own order (not the order asked).

Record:
  properties: {name: value}              every Property=value line
  load_state: "loaded" | "not-found" | "masked" | ... | None
  unit_file_state: "enabled" | "disabled" | "static" | "masked" | "" (no unit file) | None
  active_state: "active" | "inactive" | "failed" | "activating" | ... | None
  enabled / active: bool | None          None when the property was not shown

A unit that does not exist is a reading, not an error: systemd prints
LoadState=not-found, ActiveState=inactive and an empty UnitFileState.
"""

from __future__ import annotations

import re

from ._hosttext import fail, lines_of
from .base import ParseError, Parser, Record

_LINE = re.compile(r"^(?P<key>[A-Z][A-Za-z0-9]*)=(?P<value>.*)$")
_KNOWN = {
    "LoadState",
    "UnitFileState",
    "ActiveState",
    "SubState",
    "Id",
    "Names",
    "MainPID",
    "UnitFilePreset",
    "Description",
    "FragmentPath",
}


def parse_systemctl_show(text: str) -> Record:
    props: dict[str, str] = {}
    for line in lines_of(text):
        if not line.strip():
            continue
        m = _LINE.match(line.strip())
        if not m:
            raise ParseError(f"systemctl show: expected 'Property=value' lines; found {line.strip()[:80]!r}")
        props[m["key"]] = m["value"].strip()
    if not props or not (set(props) & _KNOWN):
        fail("`systemctl show -p ... UNIT` output (LoadState=, UnitFileState=, ActiveState= lines)", text)
    ufs, act = props.get("UnitFileState"), props.get("ActiveState")
    return {
        "properties": props,
        "load_state": props.get("LoadState"),
        "unit_file_state": ufs,
        "active_state": act,
        "enabled": None if ufs is None else ufs in ("enabled", "enabled-runtime"),
        "active": None if act is None else act == "active",
    }


PARSERS = [
    Parser(
        name="systemctl-show",
        reads="systemctl show -p LoadState -p UnitFileState -p ActiveState UNIT",
        func=parse_systemctl_show,
        description="systemctl show -p LoadState,UnitFileState,ActiveState: a unit's enabled and active state",
    )
]
