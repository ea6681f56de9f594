"""Safe YAML loading that remembers line numbers and rejects duplicate keys.

PyYAML silently keeps the last of two duplicate keys (yaml/pyyaml#165); in a
runbook that hides a mistake, so it is an error here. Mappings and sequences
come back as `LineDict` / `LineList`, plain dict/list subclasses that also know
the 1-based line of themselves and of each key or item, so every later check
can report `FILE:LINE: message`. The trees' types are in runbook/yaml_tree.py, the
parser itself in runbook/yaml_parse.py (imported only when a text is parsed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import InputError, Problem
from .yaml_tree import MAX_EXPANDED_NODES, LineDict, LineList

__all__ = ["MAX_EXPANDED_NODES", "LineDict", "LineList", "load_file", "load_text", "text_cache"]


# Parsed trees by text (workspace/load_cache.py), set while a state directory's
# project loads: `get(text, file) -> (hit, tree)`, `put(text, tree)`.
text_cache: Any = None


def load_text(text: str, file: str = "<yaml>") -> Any:
    """Parse YAML text; raise InputError(`file:line: message`) on any syntax problem."""
    cache = text_cache
    if cache is None:
        return _parse(text, file)
    hit, tree = cache.get(text, file)
    if not hit:
        tree = _parse(text, file)
        cache.put(text, tree)
    return tree


def _parse(text: str, file: str) -> Any:
    # PyYAML is imported only when a text is parsed: a run whose files are all in the
    # load cache (workspace/load_cache.py) never needs it (bench/cold_phases.py)
    from .yaml_parse import parse

    return parse(text, file)


def load_file(path: str | Path) -> Any:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(Problem(str(path), None, f"not UTF-8 text ({exc.reason})")) from None
    except OSError as exc:
        raise InputError(Problem(str(path), None, f"cannot read: {exc.strerror}")) from None
    return load_text(text, str(path))
