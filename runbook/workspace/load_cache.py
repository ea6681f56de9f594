"""Parsed YAML remembered under the state directory (STATE/load-cache/), so that a
`runbook run` does not parse the same step and inventory files again: parsing is
about half of loading them (bench/cold_phases.py shows the phase).

One file per YAML text, named by the SHA-256 of the text and of the parsing code's
fingerprint (runbook/yamlsafe.py, yaml_tree.py, yaml_parse.py and this module;
runbook/code_fingerprint.py): a changed text or a changed module is another name, so a
stale entry is never found. The trees are stored as plain data with `marshal`
(str, int, float, bool, None, bytes, in lists and tuples), never pickled; a tree with
anything else (a YAML timestamp, a value reached through two aliases) is simply
not cached. Nothing is trusted that this user did not write: the directory must be
ours and 0700, each file ours and writable by nobody else, opened without
following links, and its payload must match the SHA-256 written before it (a torn
or damaged file is a miss, never fed to marshal)."""

from __future__ import annotations

import hashlib
import marshal
import os
from pathlib import Path
from typing import Any

from ..code_fingerprint import fingerprint
from ..owned_files import private_dir, trusted_dir, trusted_file
from ..yamlsafe import LineDict, LineList

DIR_NAME = "load-cache"
_CODE = ("yamlsafe.py", "yaml_tree.py", "yaml_parse.py", "workspace/load_cache.py")  # the parsing code
_FORMAT = b"runbook load-cache 1\0"
_MAX_DEPTH = 200  # deeper trees are parsed each time (no recursion limit met in decoding)


class _Uncacheable(Exception):
    pass


def _code_digest() -> bytes | None:
    """None when the parsing code cannot be read: nothing is then cached or found."""
    code = fingerprint(_CODE)
    return None if code is None else hashlib.sha256(_FORMAT + code.encode()).digest()


_SCALARS = (str, int, float, bool, type(None), bytes)


def _encode(value: Any, seen: set[int], depth: int) -> Any:
    if type(value) in _SCALARS:
        return value
    if depth > _MAX_DEPTH or id(value) in seen:  # an alias: copies would not be the same object
        raise _Uncacheable
    seen.add(id(value))
    t = type(value)
    if t is LineDict:
        items = [
            (_encode(k, seen, depth + 1), value.line_of(k), _encode(v, seen, depth + 1))
            for k, v in value.items()
        ]
        return ("d", value.line, items)
    if t is LineList:
        items = [(_encode(v, seen, depth + 1), value.line_of(i)) for i, v in enumerate(value)]
        return ("l", value.line, items)
    raise _Uncacheable  # sets, timestamps, !!omap's pairs, anything else


def _decode(data: Any, file: str) -> Any:
    if type(data) is not tuple:
        return data
    kind = data[0]
    if kind == "d":
        d = LineDict()
        d.line, d.file = data[1], file
        for k, line, v in data[2]:
            key = _decode(k, file)
            d[key] = _decode(v, file)
            d.key_lines[key] = line
        return d
    if kind == "l":
        lst = LineList()
        lst.line, lst.file = data[1], file
        for v, line in data[2]:
            lst.append(_decode(v, file))
            lst.item_lines.append(line)
        return lst
    raise ValueError(f"unknown kind {kind!r}")


class LoadCache:
    """yamlsafe's text cache (yamlsafe.text_cache): get / put a parsed tree by its text."""

    def __init__(self, state_dir: str | Path):
        self.dir = Path(state_dir) / DIR_NAME
        self._code = _code_digest()
        self._dir_ok: bool | None = None
        self.hits = self.misses = 0
        # trees parsed while the state directory did not exist yet (a site's first
        # run): written by write_pending once the run has made it
        self.pending: list[tuple[str, bytes]] = []

    def _name(self, text: str) -> Path:
        return self.dir / hashlib.sha256(self._code + text.encode("utf-8", "surrogatepass")).hexdigest()

    def _directory_ok(self) -> bool:
        if self._dir_ok is None:
            self._dir_ok = trusted_dir(self.dir)
        return self._dir_ok

    def get(self, text: str, file: str) -> tuple[bool, Any]:
        """(True, tree) when this text's tree is cached and trusted, else (False, None)."""
        if self._code is None or not self._directory_ok():
            self.misses += 1
            return False, None
        blob = trusted_file(self._name(text))
        if blob is None:
            self.misses += 1
            return False, None
        digest, payload = blob[:32], blob[32:]
        if len(digest) != 32 or hashlib.sha256(payload).digest() != digest:
            self.misses += 1
            return False, None
        try:
            tree = _decode(marshal.loads(payload), file)
        except (ValueError, EOFError, TypeError, IndexError, KeyError):
            self.misses += 1
            return False, None
        self.hits += 1
        return True, tree

    def put(self, text: str, tree: Any) -> None:
        """Remember a parsed tree (nothing when it holds what plain data cannot say,
        or when the directory cannot be made ours)."""
        if self._code is None:
            return
        try:
            payload = marshal.dumps(_encode(tree, set(), 0))
        except (_Uncacheable, ValueError, RecursionError):
            return
        if not self.dir.parent.is_dir():
            # no state directory yet: a command that fails leaves nothing behind
            self.pending.append((text, payload))
            return
        self._write(text, payload)

    def write_pending(self) -> None:
        """What put() kept back, now that the state directory exists."""
        if self.pending and self.dir.parent.is_dir():
            for text, payload in self.pending:
                self._write(text, payload)
            self.pending.clear()

    def _write(self, text: str, payload: bytes) -> None:
        try:
            if not private_dir(self.dir):
                return
            path = self._name(text)
            tmp = self.dir / f".tmp-{os.getpid()}-{path.name[:16]}"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(hashlib.sha256(payload).digest() + payload)
            os.replace(tmp, path)
        except OSError:
            pass  # a cache: the file is simply parsed again next time
