"""/etc/os-release (`cat /etc/os-release`): the OS identification variables.

Record: every variable under its own name (NAME, VERSION_ID, PRETTY_NAME, ID_LIKE, ...),
values unquoted the way a shell would (os-release(5): shell-compatible assignments,
no expansion). Comments and blank lines are skipped; any other line is an error,
so `cat /etc/*release` (which mixes in "Rocky Linux release 9.3 ...") is refused.
"""

from __future__ import annotations

import re
import shlex

from ._hosttext import fail, lines_of
from .base import ParseError, Parser, Record

_ASSIGN = re.compile(r"^(?P<key>[A-Z][A-Z0-9_]*)=(?P<value>.*)$")


def parse_os_release(text: str) -> Record:
    record: Record = {}
    for line in lines_of(text):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        m = _ASSIGN.match(s)
        if not m:
            fail("/etc/os-release lines like 'PRETTY_NAME=\"Rocky Linux 9.3 (Blue Onyx)\"'", s)
        try:
            words = shlex.split(m["value"], posix=True) if m["value"] else [""]
        except ValueError as bad:
            raise ParseError(f"os-release: cannot unquote {s!r}: {bad}") from None
        if len(words) != 1:
            raise ParseError(f"os-release: {m['key']} holds several words without quotes: {s!r}")
        record[m["key"]] = words[0]
    if not record or not {"ID", "NAME", "PRETTY_NAME", "VERSION_ID"} & record.keys():
        fail("/etc/os-release with NAME=, ID=, VERSION_ID= or PRETTY_NAME=", text)
    return record


PARSERS = [
    Parser(
        name="os-release",
        reads="cat /etc/os-release",
        func=parse_os_release,
        description="distribution id, version and pretty name from /etc/os-release",
    )
]
