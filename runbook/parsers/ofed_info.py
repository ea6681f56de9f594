"""`ofed_info -s` and the full `ofed_info`: the installed MLNX_OFED release.

Record:
  version: "MLNX_OFED_LINUX-23.10-1.1.9.0"   (the trailing ':' of `-s` stripped)
  release: "23.10-1.1.9.0"                    (the numbers alone, for semver checks)
  distro:  "MLNX_OFED_LINUX"                  (the part before the release; DOCA-OFED
                                              hosts print e.g. "OFED-internal-24.07-0.6.1:")
  base:    "OFED-5.0-2.1.8" from the full header "(OFED-5.0-2.1.8)", else null
  full:    whether this was the full form (component list / installed packages)
  components: [{name, source, commit}]        full form; a name may repeat
  installed_packages: [{name, version?, arch?, description?}]
                      rpm flavour gives names only, dpkg flavour ("ii  name  ver  arch  desc")
                      gives all four; null when the output has no such section
"""

from __future__ import annotations

import re

from ._hosttext import fail, lines_of
from .base import ParseError, Parser, Record

_HEADER = re.compile(
    r"^(?P<version>(?P<distro>[A-Za-z][A-Za-z0-9_-]*?)-(?P<release>\d+\.\d+[-.\w]*?))"
    r"(?:\s+\((?P<base>[^)]*)\))?:?\s*$"
)
_DPKG = re.compile(
    r"^(?P<state>[a-z][a-zA-Z]{1,2})\s+(?P<name>\S+)\s+(?P<version>\S+)\s+(?P<arch>\S+)\s*(?P<desc>.*)$"
)


def parse_ofed_info(text: str) -> Record:
    lines = [ln for ln in lines_of(text)]
    body = [ln for ln in lines if ln.strip()]
    if not body:
        fail("`ofed_info -s` output like 'MLNX_OFED_LINUX-23.10-1.1.9.0:'", text)
    m = _HEADER.match(body[0].strip())
    if not m or "OFED" not in m["distro"].upper():
        fail("`ofed_info` header like 'MLNX_OFED_LINUX-23.10-1.1.9.0:'", text)
    record: Record = {
        "version": m["version"],
        "release": m["release"],
        "distro": m["distro"],
        "base": m["base"],
        "full": len(body) > 1,
        "components": [],
        "installed_packages": None,
    }
    rest = lines[lines.index(body[0]) + 1 :]
    try:
        split = next(i for i, ln in enumerate(rest) if ln.strip() == "Installed Packages:")
    except StopIteration:
        split = len(rest)
    record["components"] = _components(rest[:split])
    if split < len(rest):
        record["installed_packages"] = _packages(rest[split + 1 :])
    if record["full"] and not record["components"] and record["installed_packages"] is None:
        raise ParseError(
            f"ofed_info: after {body[0].strip()!r} expected component blocks or "
            f"'Installed Packages:', found {body[1].strip()[:60]!r}"
        )
    return record


def _components(lines: list[str]) -> list[Record]:
    """'name:' then its source line(s); real output sometimes omits the blank line between."""
    components: list[Record] = []
    for line in lines:
        s = line.strip()
        if not s:
            continue
        if s.endswith(":") and " " not in s and "/" not in s:
            components.append({"name": s[:-1], "source": None, "commit": None})
        elif not components:
            raise ParseError(f"ofed_info: expected a component name like 'rdma-core:', found {s[:60]!r}")
        elif s.startswith("commit "):
            components[-1]["commit"] = s.split(None, 1)[1]
        else:
            components[-1]["source"] = s
    return components


def _packages(lines: list[str]) -> list[Record]:
    packages: list[Record] = []
    for line in lines:
        s = line.strip()
        if not s or set(s) == {"-"}:
            continue
        m = _DPKG.match(s)
        if m and len(s.split()) >= 4:
            packages.append(
                {
                    "name": m["name"],
                    "version": m["version"],
                    "arch": m["arch"],
                    "description": m["desc"].strip(),
                }
            )
        elif len(s.split()) == 1:
            packages.append({"name": s})
        else:
            raise ParseError(
                f"ofed_info: expected a package name under 'Installed Packages:', found {s[:60]!r}"
            )
    return packages


PARSERS = [
    Parser(
        name="ofed_info",
        reads="ofed_info -s  (or the full ofed_info)",
        func=parse_ofed_info,
        description="MLNX_OFED / DOCA-OFED version string and installed components",
    )
]
