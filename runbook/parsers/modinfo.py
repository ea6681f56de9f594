"""`modinfo MODULE` (e.g. `modinfo mlx5_core`), also `modinfo mlx5_core | grep version`.

Record: every field by its name; `alias`, `parm`, `firmware`, `softdep` and any
field that repeats are lists; TAB-indented continuation lines (the signature)
are joined to the field above. Derived:
  depends: list of module names (split on ",")
  kernel_release: first word of vermagic ("6.1.0-20-amd64")
  parms: {name: description}
  out_of_tree: true when the file lies under updates/ or extra/ (DKMS / OFED builds),
               false for the distro's own kernel/ tree, null when filename is absent
"""

from __future__ import annotations

import re
from typing import Any

from ._hosttext import fail, lines_of
from .base import ParseError, Parser, Record

_FIELD = re.compile(r"^(?P<key>[a-z][a-z0-9_]*):(?:\s+(?P<value>.*))?$")
_ALWAYS_LIST = {"alias", "parm", "firmware", "softdep", "import_ns"}
# At least one of these says the text is modinfo's, not another "key: value" tool's.
_MODINFO_KEYS = {"filename", "vermagic", "srcversion"}


def parse_modinfo(text: str) -> Record:
    fields: dict[str, Any] = {}
    last: str | None = None
    for line in lines_of(text):
        if not line.strip():
            continue
        # continuation lines are TAB-indented; a copy with tabs expanded has spaces there
        if line[:1] in ("\t", " ") and last is not None:
            value = fields[last]
            if isinstance(value, list):
                value[-1] += line.strip()
            else:
                fields[last] = value + line.strip()
            continue
        if line.startswith("modinfo: ERROR:"):
            raise ParseError(f"modinfo failed: {line.strip()!r}")
        m = _FIELD.match(line.rstrip())
        if not m:
            fail("`modinfo` lines like 'version:        24.01-0.3.3'", line)
        key, value = m["key"], (m["value"] or "").strip()
        if key in _ALWAYS_LIST:
            fields.setdefault(key, []).append(value)
        elif key in fields:
            old = fields[key]
            fields[key] = (old if isinstance(old, list) else [old]) + [value]
        else:
            fields[key] = value
        last = key
    if not _MODINFO_KEYS & fields.keys():
        fail("`modinfo` output with filename:, srcversion: or vermagic:", text)
    record: Record = dict(fields)
    depends = fields.get("depends")
    record["depends"] = [d for d in depends.split(",") if d] if isinstance(depends, str) else []
    vermagic = fields.get("vermagic")
    record["kernel_release"] = vermagic.split()[0] if isinstance(vermagic, str) and vermagic else None
    record["parms"] = {p.partition(":")[0]: p.partition(":")[2] for p in fields.get("parm", [])}
    filename = fields.get("filename")
    record["out_of_tree"] = (
        bool(re.search(r"/(updates|extra)/", filename)) if isinstance(filename, str) else None
    )
    return record


PARSERS = [
    Parser(
        name="modinfo",
        reads="modinfo MODULE",
        func=parse_modinfo,
        description="kernel module filename, version, firmware, dependencies and parameters",
    )
]
