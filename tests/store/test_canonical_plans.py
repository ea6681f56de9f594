"""The canonical encoder's kept member orders (store/canonical.py _PLANS) give
the careful encoder's bytes, and refuse what it refuses, whatever was seen first."""

from __future__ import annotations

import random
from enum import Enum, IntEnum

import pytest

from runbook.store import canonical
from runbook.store.canonical import CanonicalError, canonical_bytes


class _Text(str, Enum):
    A = "a\u00e9"


class _Number(IntEnum):
    X = 3


def _careful(obj) -> bytes:
    parts: list[str] = []
    canonical._encode(obj, parts, "$")
    return "".join(parts).encode("utf-8")


_SCALARS = ["x", 'é\n"\\\x01', "", 0, -5, 2**70, True, False, None, 1.5, 0.0, 1e21, 1e-7, -2.0]
_SCALARS += [_Text.A, _Number.X, 3.25e-5, "\U0001f600", "\ue000"]
_NAMES = ["a", "b", "é", "z", "\ue000", "\U0001f600", "AA", "time", "type", "", "10", "9"]


def _value(rnd: random.Random, depth: int = 0):
    r = rnd.random()
    if depth > 3 or r < 0.5:
        return rnd.choice(_SCALARS)
    if r < 0.75:
        return [_value(rnd, depth + 1) for _ in range(rnd.randint(0, 4))]
    return {k: _value(rnd, depth + 1) for k in rnd.sample(_NAMES, rnd.randint(0, 6))}


def test_same_bytes_as_the_careful_encoder():
    rnd = random.Random(7)
    for _ in range(5000):
        value = _value(rnd)
        assert canonical_bytes(value) == _careful(value), value


def test_the_same_names_in_another_order_sort_the_same():
    first = {"type": "HostFinished", "host": "gpu01", "time": 1.5, "é": 1, "\U0001f600": 2, "\ue000": 3}
    second = dict(reversed(list(first.items())))
    assert canonical_bytes(first) == canonical_bytes(second) == _careful(first)


@pytest.mark.parametrize(
    "seen,bad",
    [({"1": "x"}, {1: "x"}), ({"a": {"2": 3}}, {"a": {2: 3}}), ({"a": 1, "None": 2}, {"a": 1, None: 2})],
)
def test_a_key_that_is_not_a_string_is_refused_after_its_names_were_seen(seen, bad):
    canonical_bytes(seen)  # a plan for names that print the same
    with pytest.raises(CanonicalError):
        canonical._fast(bad, [])


def test_a_str_subclass_key_is_refused_after_the_plain_names_were_seen():
    canonical_bytes({"a\u00e9": 1})
    with pytest.raises(CanonicalError):
        canonical._fast({_Text.A: 1}, [])
