"""`{{ var }}` templates in step commands and criteria.

Deliberately tiny (no Jinja: no expressions, no code). A placeholder is a
dotted path into the host's merged vars: `{{ ofed_version }}`,
`{{ before.LINK_TYPE_P1 }}`, `{{ compute_nics.0.dev }}`, with one optional
filter: `{{ x | default('y') }}`.

In commands every substituted value is shell-quoted (`shlex.quote`), so an
inventory value like `x; touch /tmp/pwned` stays one harmless argument. A list
becomes several quoted words (for `for d in {{ ib_mode_devices }}; do`); a
dict becomes one quoted JSON word. In criteria (`render_value`) a template
that is the whole string keeps the value's type (a list stays a list).
"""
from __future__ import annotations

import json
import re
import shlex
from typing import Any

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*(?:\|\s*default\(\s*(?:'([^']*)'|\"([^\"]*)\"|(-?[\d.]+))\s*\)\s*)?\}\}")
_MISSING = object()


class TemplateError(ValueError):
    """A placeholder names a variable the host does not define."""


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
    """The command as it will run on the host, every value shell-quoted."""
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
