"""Node state <-> JSON, so a restarted sim continues where it stopped."""

from __future__ import annotations

import dataclasses
import json
import os
import typing
from pathlib import Path
from typing import Any

from .hardware import NodeState

FORMAT = 1


def _build(tp: Any, data: Any) -> Any:
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        kwargs = {
            f.name: _build(hints[f.name], data[f.name]) for f in dataclasses.fields(tp) if f.name in data
        }
        return tp(**kwargs)
    if origin is list:
        (item,) = typing.get_args(tp) or (Any,)
        return [_build(item, x) for x in data]
    if origin is dict:
        key, value = typing.get_args(tp) or (Any, Any)
        # JSON keys are strings: an int-keyed dict (NodeState.firmware_of) gets its ints back
        return {(int(k) if key is int else k): _build(value, v) for k, v in data.items()}
    return data


_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(obj: Any) -> dict[str, Any]:
    """A dataclass as the encoder's `default` sees it: its fields, one level deep.
    The encoder does the lists, dicts and scalars itself, so this writes what
    json.dumps(dataclasses.asdict(...)) means without asdict's deep copies."""
    t = type(obj)
    names = _FIELDS.get(t)
    if names is None:
        if not dataclasses.is_dataclass(t):
            raise TypeError(f"Object of type {t.__name__} is not JSON serializable")
        names = _FIELDS[t] = tuple(f.name for f in dataclasses.fields(t))
    own = getattr(obj, "__dict__", None)
    if own is not None and len(own) == len(names) and tuple(own) == names:
        return own  # its fields and nothing else, in their order: the dict itself (read, not kept)
    return {n: getattr(obj, n) for n in names}


def _std_dumps(obj: Any) -> bytes:
    return json.dumps(obj, default=_fields, check_circular=False).encode("ascii")


try:
    # orjson, with every dataclass handed to _fields (so an attribute set on one
    # instance beside its fields is left out, as asdict leaves it) and int keys written
    # as strings (_build turns them back): the same JSON as json.dumps(asdict(...)) in
    # 45 % of the CPU (0.25 -> 0.11 s for 1,000 nodes), which the lab spends at every
    # save (lab.py).
    import orjson

    _OPTIONS = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_NON_STR_KEYS

    def _dumps(obj: Any) -> bytes:
        try:
            return orjson.dumps(obj, default=_fields, option=_OPTIONS)
        except (orjson.JSONEncodeError, TypeError):  # an integer past 64 bits, say
            return _std_dumps(obj)
except ImportError:  # pragma: no cover - a platform without orjson's wheel (as store/storage.py)
    _dumps = _std_dumps


def encode(key: dict[str, Any], nodes: dict[str, NodeState]) -> bytes:
    return _dumps({"format": FORMAT, "key": key, "nodes": list(nodes.values())})


def save(path: Path, key: dict[str, Any], nodes: dict[str, NodeState]) -> None:
    _write(path, encode(key, nodes))


class NodeTexts:
    """The saved file, built from each node's JSON kept between saves: a save
    encodes again only the nodes marked changed since the one before (the
    whole lab's JSON was 0.15 s of CPU at 384 nodes, 0.3 s at 1,000, at every
    save). The bytes are encode()'s (tests/sim/test_persist.py)."""

    def __init__(self) -> None:
        self._texts: dict[str, bytes] = {}
        self._stale: set[str] | None = None  # None: every node

    def mark(self, name: str | None = None) -> None:
        """Node `name` changed (None: any of them may have)."""
        if name is None:
            self._stale = None
        elif self._stale is not None:
            self._stale.add(name)

    def save(self, path: Path, key: dict[str, Any], nodes: dict[str, NodeState]) -> None:
        texts, stale = self._texts, self._stale
        for name, state in nodes.items():
            if stale is None or name in stale or name not in texts:
                texts[name] = _dumps(state)
        self._stale = set()
        head = _dumps({"format": FORMAT, "key": key})[:-1]  # without its "}"
        _write(path, b"".join((head, b',"nodes":[', b",".join(texts[n] for n in nodes), b"]}")))


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)  # atomic: a killed sim never leaves half a file


def load(path: Path, key: dict[str, Any]) -> dict[str, NodeState] | None:
    """The saved nodes, or None when there is no usable save for this cluster shape."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if doc.get("format") != FORMAT or doc.get("key") != key:
        return None
    try:
        nodes = [_build(NodeState, n) for n in doc["nodes"]]
    except (KeyError, TypeError):
        return None
    return {n.name: n for n in nodes}
