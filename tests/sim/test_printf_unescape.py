"""printf's and echo -e's escapes (sim/commands/builtins.py _unescape): a text
without a backslash is returned as it is, any other as the regex replacement
always gave it."""

from __future__ import annotations

import re

from runbook.sim.commands.builtins import _unescape


def unescape_by_regex(text: str) -> str:
    table = {"n": "\n", "t": "\t", "\\": "\\", "r": "\r", "a": "\a", "0": "\0", "e": "\x1b"}
    return re.sub(r"\\(.)", lambda m: table.get(m.group(1), "\\" + m.group(1)), text)


TEXTS = [
    "",
    "plain",
    "\n223094b0 0 0\n",
    "a\\nb",
    "\\",
    "x\\",
    "\\\\n",
    "\\q",
    "\\t\\r\\a\\0\\e",
    "\\\n",
    "%s\\n",
]


def test_unescape_answers_as_the_regex_did():
    for text in TEXTS:
        assert _unescape(text) == unescape_by_regex(text), text


async def test_the_batch_framing_printf_prints_its_marker(machine_of, sh):
    gpu01 = machine_of(2)("gpu01")
    out, err, status = await sh(
        gpu01, "printf '\\n%s 0 %d\\n' abc 3; printf '%s|%5.1f|%x\\n' 'a\\tb' 2.25 255"
    )
    assert (out, err, status) == ("\nabc 0 3\na\tb|  2.2|ff\n", "", 0)
