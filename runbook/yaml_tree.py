"""What runbook/yamlsafe.py's parsed YAML is made of: LineDict / LineList (plain
dict / list subclasses that know their lines) and the limit on a document's size
with its aliases expanded. A leaf: the parser (runbook/yaml_parse.py) and the
load cache (runbook/workspace/load_cache.py) build these without PyYAML's import
in between."""

from __future__ import annotations

from typing import Any


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


# Values a document may stand for once its aliases are expanded. A real step
# file or inventory has thousands; an alias bomb ("billion laughs": each level
# repeats the one before nine times) has billions and exhausts memory the
# first time the value is copied or hashed.
MAX_EXPANDED_NODES = 1_000_000
