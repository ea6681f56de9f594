"""The run summary's `--json` text (`runbook run`, `runbook status`): what the
standard library's `json.dumps(doc, indent=2)` writes, byte for byte, written by
orjson. The standard library indents only with its pure-Python encoder: 0.33 s
for a 1,000-host run's summary, the last thing the run does before it exits;
orjson takes 0.04 s (bench/README.md, "After session 13").

Byte for byte for what a summary holds (run/summary.py): objects with text keys,
lists, text, integers, true/false/null. orjson writes text as UTF-8 where the
standard library escapes DEL and every character past ASCII (\\uXXXX, a
surrogate pair past U+FFFF): those are escaped here after. Not for floats: the
two write exponents differently (1e+16, 1e16), and a summary has none
(tests/core/test_summary_json.py compares the two on a summary of the shipped
runbook and on generated documents). Without orjson, or for what it refuses (an
integer past 64 bits, a key not text), the standard library's own.
"""

from __future__ import annotations

import json
import re
from typing import Any

# what the standard library escapes and orjson does not: past ASCII, and DEL
_ESCAPED = re.compile(r"[^\x00-\x7e]")


def _escaped(m: re.Match) -> str:
    code = ord(m.group(0))  # "\\u%04x": lower-case hex, as the standard library's
    if code > 0xFFFF:
        code -= 0x10000
        return "\\u%04x\\u%04x" % (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))
    return "\\u%04x" % code


def summary_json(doc: dict[str, Any]) -> str:
    """`json.dumps(doc, indent=2)` of a run summary (no floats in it)."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a dependency (pyproject.toml)
        return json.dumps(doc, indent=2)
    try:
        text = orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode()
    except TypeError:  # e.g. an integer past 64 bits: the standard library writes it
        return json.dumps(doc, indent=2)
    return text if text.isascii() and "\x7f" not in text else _ESCAPED.sub(_escaped, text)
