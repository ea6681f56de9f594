"""The YAML parser behind runbook/yamlsafe.py (its load_text on a cache miss):
PyYAML's safe loader, with duplicate keys rejected, line numbers kept in
LineDict / LineList, and alias bombs refused. Imported only when a text is
actually parsed."""

from __future__ import annotations

from typing import Any

import yaml

from .errors import InputError, Problem
from .yaml_tree import MAX_EXPANDED_NODES, LineDict, LineList

# libyaml's parser when present (several times faster on large inventories);
# the constructors below are Python either way, so behaviour is identical.
_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_Base):
    """SafeLoader + duplicate-key rejection + line tracking."""

    file = "<yaml>"


class _StrictPyLoader(yaml.SafeLoader):
    """The same in pure Python: for text libyaml would crash on (it recurses in C
    on deeply nested flow collections and takes the process down)."""

    file = "<yaml>"


_MAX_C_FLOW_DEPTH = 500


def _flow_depth(text: str) -> int:
    """An upper bound of the nesting of `[` / `{` (quotes not parsed: it may overcount)."""
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(0, depth - 1)
    return deepest


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
            ) from None
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


for _loader in (_StrictLoader, _StrictPyLoader):
    _loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
    _loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def _expanded_sizes(root: yaml.Node) -> dict[int, int]:
    """Every node's size with aliases expanded (by id), computed once per node."""
    sizes: dict[int, int] = {}

    def size(node: yaml.Node) -> int:
        known = sizes.get(id(node))
        if known is not None:
            return known
        sizes[id(node)] = 1  # a recursive alias counts once, PyYAML builds it as a cycle
        total = 1
        if isinstance(node, yaml.SequenceNode):
            total += sum(size(n) for n in node.value)
        elif isinstance(node, yaml.MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        sizes[id(node)] = total
        return total

    size(root)
    return sizes


def _check_expansion(root: yaml.Node | None, file: str) -> None:
    if root is None:
        return
    sizes = _expanded_sizes(root)
    if sizes[id(root)] <= MAX_EXPANDED_NODES:
        return
    node = root  # the innermost value that alone is too big: the line to look at
    while True:
        children = (
            node.value
            if isinstance(node, yaml.SequenceNode)
            else [n for kv in node.value for n in kv]
            if isinstance(node, yaml.MappingNode)
            else []
        )
        big = next((c for c in children if sizes[id(c)] > MAX_EXPANDED_NODES), None)
        if big is None:
            break
        node = big
    raise InputError(
        Problem(
            file,
            node.start_mark.line + 1,
            f"YAML: aliases expand this value to {sizes[id(node)]} values, more "
            f"than {MAX_EXPANDED_NODES} (an alias bomb?)",
        )
    )


def parse(text: str, file: str) -> Any:
    # fewer openers than the limit cannot nest deeper than it: the scan (~6 ms over the
    # shipped steps) only for a text that could
    openers = text.count("[") + text.count("{")
    deep = openers > _MAX_C_FLOW_DEPTH and _flow_depth(text) > _MAX_C_FLOW_DEPTH
    loader = _StrictPyLoader(text) if deep else _StrictLoader(text)
    loader.file = file
    try:
        root = loader.get_single_node()
        _check_expansion(root, file)
        return loader.construct_document(root) if root is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        what = exc.problem or exc.context or "invalid YAML"
        raise InputError(Problem(file, line, f"YAML: {what}")) from None
    except yaml.YAMLError as exc:  # pragma: no cover - defensive
        raise InputError(Problem(file, None, f"YAML: {exc}")) from None
    except RecursionError:
        raise InputError(Problem(file, None, "YAML: nested too deeply")) from None
    finally:
        dispose = getattr(loader, "dispose", None)
        if dispose:
            dispose()
