"""`{{ var }}` templates in step commands and criteria.

Deliberately tiny (no Jinja: no expressions, no code). A placeholder is a
dotted path into the host's merged vars: `{{ ofed_version }}`,
`{{ before.LINK_TYPE_P1 }}`, `{{ compute_nics.0.dev }}`, with one optional
filter: `{{ x | default('y') }}`.

In commands every substituted value is shell-quoted (`shlex.quote`), so an
inventory value like `x; touch /tmp/pwned` stays one harmless argument. That
holds only where the shell reads quotes: a placeholder inside '...' or "...",
in backticks or in a here-document would put the value's own quotes inside
other quotes, so such a command is refused (lint says where, and
render_command refuses to produce it; docs/security.md). A list
becomes several quoted words (for `for d in {{ ib_mode_devices }}; do`); a
dict becomes one quoted JSON word. In criteria (`render_value`) a template
that is the whole string keeps the value's type (a list stays a list).
"""

from __future__ import annotations

import functools
import json
import re
import shlex
from typing import Any

PLACEHOLDER = re.compile(
    r"\{\{\s*([A-Za-z_][\w.]*)\s*(?:\|\s*default\(\s*(?:'([^']*)'|\"([^\"]*)\"|(-?[\d.]+))\s*\)\s*)?\}\}"
)
_MISSING = object()


class TemplateError(ValueError):
    """A placeholder names a variable the host does not define."""


_OPENING = re.compile(r"\{\{\s*[A-Za-z_]")


def malformed_placeholder(text: str) -> str | None:
    """The first `{{ name` that is not a whole placeholder (unterminated, or a
    filter other than default), else None: it would be sent to the host as is."""
    rest = PLACEHOLDER.sub("", text)
    m = _OPENING.search(rest)
    if not m:
        return None
    return rest[m.start() : m.start() + 30].split("\n")[0]


def placeholders(text: str) -> list[str]:
    """Variable paths used by a template (for lint: every one must be defined)."""
    return [m.group(1) for m in PLACEHOLDER.finditer(text)]


def has_default(text: str, path: str) -> bool:
    return any(m.group(1) == path and m.group(0).find("default(") >= 0 for m in PLACEHOLDER.finditer(text))


def lookup(variables: dict[str, Any], path: str) -> Any:
    value: Any = variables
    for part in path.split("."):
        if isinstance(value, dict):
            if part in value:
                value = value[part]
            elif part.isdigit() and int(part) in value:  # YAML int keys, e.g. rail_leaves: {1: leaf01}
                value = value[int(part)]
            else:
                return _MISSING
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


def _resolve(match: re.Match, variables: dict[str, Any]) -> Any:
    path = match.group(1)
    value = lookup(variables, path)
    if value is _MISSING:
        for default in match.group(2, 3, 4):
            if default is not None:
                return default
        raise TemplateError(f"undefined variable {path!r}")
    return value


_WORD_START = set(" \t\n;&|()<>")
# A run of characters that changes no context anywhere (quotes, escapes, $, (), [],
# comments, here-documents, placeholders all start with one of these): skipped in one
# step, not one character at a time (the commands of a whole runbook are read at every
# load: 3.7 ms of a cold `runbook run` character by character).
_PLAIN = re.compile(r"[^\\'\"`$()\[\]#<\n{]+")
_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][\w.-]*)\2")
QUOTING_FIX = "drop the quotes, the value is quoted for you"
_WHERE = {
    "'": "inside single quotes",
    "$'": "inside $'...' quotes",
    '"': "inside double quotes",
    "`": "inside backticks (use $(...))",
    "<<": "inside a here-document",
    "#": "inside a comment (a newline in the value would end it)",
    "arith": "inside arithmetic $(( )) / (( )) (bash evaluates the value, quotes or not)",
    "[[": "inside [[ ]] (bash evaluates -eq operands, quotes or not; use [ ])",
}


@functools.lru_cache(maxsize=4096)
def unsafe_placeholders(template: str) -> tuple[tuple[str, str, int], ...]:
    """Placeholders of a shell command in a context where a quoted value is not
    one word: (placeholder text, where, 1-based line within the template).
    A small model of POSIX sh quoting: '...', $'...', "...", `...`, $(...),
    comments and here-documents; everything else is an ordinary word."""
    spans = {m.start(): m for m in PLACEHOLDER.finditer(template)}
    if not spans:
        return ()
    found: list[tuple[str, str, int]] = []
    stack = ["top"]  # top | sub ($(...) or (...)) | arith | [[ | ' | $' | " | `
    heredocs: list[tuple[str, bool]] = []  # (delimiter, strip tabs) awaiting the next line
    i, n = 0, len(template)
    while i < n:
        plain = _PLAIN.match(template, i)
        if plain is not None:
            i = plain.end()
            continue
        ctx = stack[-1]
        m = spans.get(i)
        if m is not None:
            if ctx not in ("top", "sub"):
                found.append((m.group(0), _WHERE[ctx], template.count("\n", 0, i) + 1))
            i = m.end()
            continue
        ch = template[i]
        two = template[i : i + 2]
        if ctx in ("'",):
            if ch == "'":
                stack.pop()
            i += 1
            continue
        if ch == "\\":
            i += 2
            continue
        if ctx == "$'":
            if ch == "'":
                stack.pop()
            i += 1
            continue
        if ctx == "`":
            if ch == "`":
                stack.pop()
            i += 1
            continue
        if ctx == '"':
            if ch == '"':
                stack.pop()
            elif two == "$(":
                stack.append("sub")
                i += 2
                continue
            elif ch == "`":
                stack.append("`")
            i += 1
            continue
        # ordinary shell text: top, sub, or arithmetic / [[ ]] (which bash evaluates:
        # `$(( 'a[$(cmd)]' ))` and `[[ 'a[$(cmd)]' -eq 1 ]]` run cmd despite the quotes)
        at_word = i == 0 or template[i - 1] in _WORD_START
        if ctx == "arith" and two == "))":
            stack.pop()
            i += 2
            continue
        if ctx == "[[" and two == "]]":
            stack.pop()
            i += 2
            continue
        if template.startswith("$((", i):
            stack.append("arith")
            i += 3
            continue
        if at_word and ctx in ("top", "sub") and two in ("((", "[["):
            stack.append("arith" if two == "((" else "[[")
            i += 2
            continue
        if ch == "'":
            stack.append("'")
        elif two == "$'":
            stack.append("$'")
            i += 2
            continue
        elif ch == '"':
            stack.append('"')
        elif ch == "`":
            stack.append("`")
        elif ch == "(":
            stack.append("sub" if ctx in ("top", "sub") or two == "$(" else "arith")
        elif ch == ")" and ctx in ("sub", "arith") and len(stack) > 1:
            stack.pop()
        elif ch == "#" and ctx in ("top", "sub") and at_word:
            end = template.find("\n", i)
            end = n if end < 0 else end
            for start, pm in spans.items():  # a newline in the value would end the comment
                if i < start < end:
                    found.append((pm.group(0), _WHERE["#"], template.count("\n", 0, start) + 1))
            i = end
            continue
        elif two == "<<" and template[i : i + 3] != "<<<":
            h = _HEREDOC.match(template, i)
            if h:
                heredocs.append((h.group(3), h.group(1) == "-"))
                i = h.end()
                continue
        elif ch == "\n" and heredocs:
            i = _skip_heredocs(template, i + 1, heredocs, spans, found)
            heredocs.clear()
            continue
        i += 1
    return tuple(found)


def _skip_heredocs(template: str, i: int, heredocs: list[tuple[str, bool]], spans: dict, found: list) -> int:
    """Past the bodies of the here-documents that start at offset i; every
    placeholder in a body is recorded."""
    for delimiter, strip_tabs in heredocs:
        while i < len(template):
            end = template.find("\n", i)
            end = len(template) if end < 0 else end
            line = template[i:end]
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                i = end + 1
                break
            for start, m in spans.items():
                if i <= start < end:
                    found.append((m.group(0), _WHERE["<<"], template.count("\n", 0, start) + 1))
            i = end + 1
    return i


def fix_for(where: str) -> str:
    if where in (_WHERE["'"], _WHERE["$'"], _WHERE['"']):
        return QUOTING_FIX
    if "backticks" in where:
        return "use $(...) around it instead"
    if "here-document" in where:
        return "write it with printf '%s\\n' {{ ... }} instead"
    if "comment" in where:
        return "take it out of the comment"
    return 'compare with [ ] instead (v={{ ... }}; [ "$v" -gt N ]), which does not evaluate it'


def quoting_problems(template: str) -> list[str]:
    """One message per placeholder in an unsafe quoting context (empty: safe)."""
    return [f"{text} is {where}: {fix_for(where)}" for text, where, _ in unsafe_placeholders(template)]


def _shell_word(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return " ".join(_shell_word(v) for v in value) if value else "''"
    if isinstance(value, dict):
        return shlex.quote(json.dumps(value, sort_keys=True))
    if value is None:
        return "''"
    return shlex.quote(str(value))


def render_command(template: str, variables: dict[str, Any]) -> str:
    """The command as it will run on the host, every value shell-quoted. A
    template with a placeholder where quoting does not protect it is refused."""
    problems = quoting_problems(template)
    if problems:
        raise TemplateError(f"refused to build the command: {problems[0]}")
    return PLACEHOLDER.sub(lambda m: _shell_word(_resolve(m, variables)), template)


def render_regex(pattern: str, variables: dict[str, Any]) -> str:
    """A `matches` / `not_matches` pattern: each placeholder becomes its value
    escaped (re.escape), so an inventory value is matched literally - a mirror
    URL's dots or a '+' in a version never act as regex syntax."""
    import re

    return PLACEHOLDER.sub(lambda m: re.escape(str(_resolve(m, variables))), pattern)


def render_value(value: Any, variables: dict[str, Any]) -> Any:
    """Expected values in criteria: no quoting; a lone placeholder keeps its type."""
    if isinstance(value, str):
        whole = PLACEHOLDER.fullmatch(value.strip())
        if whole:
            return _resolve(whole, variables)
        return PLACEHOLDER.sub(lambda m: str(_resolve(m, variables)), value)
    if isinstance(value, list):
        return [render_value(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: render_value(v, variables) for k, v in value.items()}
    return value
