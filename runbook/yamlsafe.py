"""Safe YAML loading that remembers line numbers and rejects duplicate keys.

PyYAML silently keeps the last of two duplicate keys (yaml/pyyaml#165); in a
runbook that hides a mistake, so it is an error here. Mappings and sequences
come back as `LineDict` / `LineList`, plain dict/list subclasses that also know
the 1-based line of themselves and of each key or item, so every later check
can report `FILE:LINE: message`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .errors import InputError, Problem


class LineDict(dict):
    line: int = 0
    file: str = ""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.key_lines: dict[Any, int] = {}

    def line_of(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)


class LineList(list):
    line: int = 0
    file: str = ""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.item_lines: list[int] = []

    def line_of(self, index: int) -> int:
        if 0 <= index < len(self.item_lines):
            return self.item_lines[index]
        return self.line


# libyaml's parser when present (several times faster on large inventories);
# the constructors below are Python either way, so behaviour is identical.
_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_Base):
    """SafeLoader + duplicate-key rejection + line tracking."""

    file = "<yaml>"


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    result = LineDict()
    result.line = node.start_mark.line + 1
    result.file = loader.file
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, f"unhashable key {key!r}", key_node.start_mark
            )
        if key in result:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"duplicate key {key!r} (first at line {result.key_lines[key]})",
                key_node.start_mark,
            )
        result[key] = loader.construct_object(value_node, deep=True)
        result.key_lines[key] = key_node.start_mark.line + 1
    return result


def _construct_sequence(loader: _StrictLoader, node: yaml.SequenceNode) -> LineList:
    result = LineList()
    result.line = node.start_mark.line + 1
    result.file = loader.file
    for item in node.value:
        result.append(loader.construct_object(item, deep=True))
        result.item_lines.append(item.start_mark.line + 1)
    return result


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def load_text(text: str, file: str = "<yaml>") -> Any:
    """Parse YAML text; raise InputError(`file:line: message`) on any syntax problem."""
    loader = _StrictLoader(text)
    loader.file = file
    try:
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        what = exc.problem or exc.context or "invalid YAML"
        raise InputError(Problem(file, line, f"YAML: {what}")) from None
    except yaml.YAMLError as exc:  # pragma: no cover - defensive
        raise InputError(Problem(file, None, f"YAML: {exc}")) from None
    finally:
        dispose = getattr(loader, "dispose", None)
        if dispose:
            dispose()


def load_file(path: str | Path) -> Any:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(Problem(str(path), None, f"not UTF-8 text ({exc.reason})")) from None
    except OSError as exc:
        raise InputError(Problem(str(path), None, f"cannot read: {exc.strerror}")) from None
    return load_text(text, str(path))
