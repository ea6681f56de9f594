"""A clean lint result, remembered under the state directory so that a `runbook run`
does not lint the same steps and inventory again (lint is ~0.2 s at 50 hosts and grows
with hosts x steps; bench/cold_start.py). Only "no problems" is remembered, under a key
that hashes the bytes of the step files and of the inventory files (Runbook.sha256,
Inventory.sha256) and the fingerprint of the code lint depends on
(runbook/code_fingerprint.py): any change to one of them is a different key, so lint
runs again. Nothing is trusted without it.

Beside it, keyed by the code's fingerprint alone: which parser module defines which parser
name (runbook/parsers/__init__.py use_index) and which designs/ module defines which design
comparison, with its scope (runbook/criteria/design.py use_index), written after a full
discovery of both, so that loading the steps checks their `parse:` and `design:` names
without importing every parser and comparator module, and a run imports only the ones
its steps use.

Both are trusted only as workspace/load_cache.py trusts its files: a directory of this
user's with mode 0700, files this user wrote, writable by nobody else, not links
(runbook/owned_files.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..code_fingerprint import fingerprint
from ..definition.model import Inventory, Runbook
from ..owned_files import read_json, read_keyed, write_json

DIR_NAME = "lint-cache"
# what lint's verdict depends on: the loaders, lint itself, the parsers and criteria it names
CODE = ("*.py", "definition", "inventory", "criteria", "parsers")  # "*.py": the package's own top level
MODULE_INDEX = "indexes-{code}.json"


def key(runbook: Runbook, inventory: Inventory) -> str | None:
    if not (runbook.sha256 and inventory.sha256):
        return None
    code = fingerprint(CODE)
    if code is None:  # the code cannot be read: nothing is remembered
        return None
    return hashlib.sha256(f"{runbook.sha256}\n{inventory.sha256}\n{code}".encode()).hexdigest()


def known_clean(state_dir: str | Path, k: str | None) -> bool:
    record = read_keyed(Path(state_dir) / DIR_NAME / k, k) if k is not None else None
    return record is not None and record.get("problems") == 0


def remember_clean(state_dir: str | Path, k: str | None) -> None:
    """Only in a state directory that exists already: a command that then fails on its
    arguments leaves nothing behind."""
    if k is not None:
        write_json(Path(state_dir) / DIR_NAME / k, {"key": k, "problems": 0})


def _index_path(state_dir: str | Path) -> Path | None:
    code = fingerprint(CODE)
    if code is None:
        return None
    return Path(state_dir) / DIR_NAME / MODULE_INDEX.format(code=code)


def load_indexes(state_dir: str | Path) -> tuple[dict[str, str] | None, dict[str, tuple[str, str]] | None]:
    """({parser name: module}, {design comparison name: (module, scope)}), found by a
    full discovery of this very source; None for what is not remembered or not well-formed."""
    path = _index_path(state_dir)
    record = read_json(path) if path is not None else None
    if not isinstance(record, dict):
        return None, None
    parsers = record.get("parsers")
    if not isinstance(parsers, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v.isidentifier() for k, v in parsers.items()
    ):
        parsers = None
    designs = record.get("designs")
    if not isinstance(designs, dict) or not all(
        isinstance(k, str)
        and isinstance(v, list)
        and len(v) == 2
        and isinstance(v[0], str)
        and v[0].isidentifier()
        and v[1] in ("host", "fleet")
        for k, v in designs.items()
    ):
        designs = None
    return parsers or None, {k: (v[0], v[1]) for k, v in designs.items()} if designs else None


def remember_indexes(
    state_dir: str | Path, indexes: tuple[dict[str, str], dict[str, tuple[str, str]]]
) -> None:
    path = _index_path(state_dir)
    parsers, designs = indexes
    if path is not None and parsers and designs:
        write_json(path, {"parsers": parsers, "designs": {k: list(v) for k, v in designs.items()}})
