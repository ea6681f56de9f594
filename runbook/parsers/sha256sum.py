"""`sha256sum FILE...` (coreutils): one digest per file.

Record:
  files:  {path: sha256}          in the order printed
  count:  number of files read
Lines are `<64 hex>  <path>` (text mode) or `<64 hex> *<path>` (binary mode).
A file sha256sum could not read is reported on stderr, not here: it is simply
absent from `files` (the step's criteria say what that means).
"""

from __future__ import annotations

import re

from ._hosttext import fail, lines_of
from .base import ParseError, Parser, Record

_LINE = re.compile(r"^\\?(?P<digest>[0-9a-fA-F]{64}) [ *](?P<path>.+)$")


def parse_sha256sum(text: str) -> Record:
    files: dict[str, str] = {}
    for line in lines_of(text):
        if not line.strip():
            continue
        m = _LINE.match(line)
        if not m:
            if not files:
                fail("`sha256sum` lines like '<64 hex digits>  /etc/chrony.conf'", text)
            raise ParseError(f"sha256sum: unexpected line {line.strip()[:80]!r}")
        files[m["path"]] = m["digest"].lower()
    if not files:
        fail("`sha256sum` lines like '<64 hex digits>  /etc/chrony.conf'", text)
    return {"files": files, "count": len(files)}


PARSERS = [
    Parser(
        name="sha256sum",
        reads="sha256sum FILE...",
        func=parse_sha256sum,
        description="file -> SHA-256 digest lines",
    )
]
