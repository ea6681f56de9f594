"""Canonical JSON: the same content always gives the same bytes.

The form is RFC 8785 (JSON Canonicalization Scheme, JCS):
- UTF-8, no byte-order mark, no whitespace between tokens;
- object members sorted by their names compared as UTF-16 code units;
- strings with the minimal escapes: `\\"` `\\\\` `\\b` `\\f` `\\n` `\\r` `\\t`, other
  control characters as `\\u00xx` (lower-case hex); everything else literal;
- numbers as ECMAScript's Number.prototype.toString writes them (`1.0` is `1`,
  `1e-7` is `1e-7`, `1e21` is `1e+21`); NaN and infinities are refused.
One documented deviation: integers outside ±2**53 are written exactly (JCS would
round them through a double). Inventories carry 64-bit GUIDs; rounding them
would change the evidence.

Because this module also defines how the journal's hash chain is computed
(`journal_entry_hash`), the store must use it when it appends to the journal.
"""

from __future__ import annotations

import hashlib
import math
from decimal import Decimal
from json.encoder import encode_basestring  # JSON string escaping = JCS's (ensure_ascii off)
from typing import Any

GENESIS = "0" * 64  # `prev` of the first journal entry of a format-1 journal (no header covered)


class CanonicalError(ValueError):
    """A value that has no canonical JSON form (NaN, a non-string key, a set...)."""


def canonical_bytes(obj: Any) -> bytes:
    """The canonical UTF-8 bytes of a JSON-able value."""
    parts: list[str] = []
    try:
        _fast(obj, parts)
    except CanonicalError:
        parts = []
        _encode(obj, parts, "$")  # again, slowly, to name where the problem is
        raise AssertionError("the fast and the careful encoders disagree") from None  # pragma: no cover
    try:
        return "".join(parts).encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate somewhere
        raise CanonicalError(f"string is not valid Unicode: {exc.reason}") from None


def sha256_hex(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def journal_entry_hash(seq: int, prev: str, event: dict[str, Any]) -> str:
    """hash = sha256(canonical({"seq", "prev", "event"})), lower-case hex."""
    return sha256_hex(canonical_bytes({"seq": seq, "prev": prev, "event": event}))


def _utf16_key(name: str) -> bytes:
    # Big-endian UTF-16 bytes compare in the same order as UTF-16 code units.
    return name.encode("utf-16-be", "surrogatepass")


# A dict's member names, in its own order -> the members in canonical order, each
# with the text written before its value. The events of one type have the same
# names in the same order: checking and sorting them happens once per type, not
# once per event (bounded: a few hundred shapes in a run).
_PLANS: dict[tuple[str, ...], tuple[tuple[str, str], ...]] = {}
_PLANS_MAX = 4096
_STR = {str}


def _plan(obj: dict) -> tuple[tuple[str, str], ...]:
    names = tuple(obj)
    plan = _PLANS.get(names)
    # (a str subclass equal to a name would find the plan: the types are checked anyway)
    if plan is not None and (not names or {*map(type, names)} == _STR):
        return plan
    if not all(type(k) is str for k in names):
        raise CanonicalError("object key is not a string")
    # ASCII keys sort the same by code point as by UTF-16 code unit
    ordered = sorted(names, key=None if all(k.isascii() for k in names) else _utf16_key)
    plan = tuple((k, ("," if i else "") + encode_basestring(k) + ":") for i, k in enumerate(ordered))
    if len(_PLANS) < _PLANS_MAX:
        _PLANS[names] = plan
    return plan


def _fast(obj: Any, out: list[str]) -> None:
    """_encode without the bookkeeping of paths (they are only for error
    messages) and with the common cases first: it runs for every journal event."""
    if isinstance(obj, str):
        out.append(encode_basestring(obj))
    elif isinstance(obj, dict):
        out.append("{")
        for name, before in _plan(obj):
            out.append(before)
            value = obj[name]
            kind = type(value)  # the usual members written here, without a call
            if kind is str:
                out.append(encode_basestring(value))
            elif value is None:
                out.append("null")
            elif kind is int:
                out.append(str(value))
            else:
                _fast(value, out)
        out.append("}")
    elif obj is None:
        out.append("null")
    elif obj is True:
        out.append("true")
    elif obj is False:
        out.append("false")
    elif isinstance(obj, int):
        out.append(str(int(obj)))
    elif isinstance(obj, float):
        # repr() is ECMAScript's shortest round-trip form, in positional notation,
        # for non-integral values in [1e-4, 1e16): timestamps and rates all land here.
        if 1e-4 <= abs(obj) < 1e16 and not obj.is_integer():
            out.append(repr(obj))
        else:
            out.append(format_number(obj))
    elif isinstance(obj, (list, tuple)):
        out.append("[")
        for i, v in enumerate(obj):
            if i:
                out.append(",")
            _fast(v, out)
        out.append("]")
    else:
        raise CanonicalError(f"{type(obj).__name__} has no JSON form")


def _encode(obj: Any, out: list[str], path: str) -> None:
    if obj is None:
        out.append("null")
    elif obj is True:
        out.append("true")
    elif obj is False:
        out.append("false")
    elif isinstance(obj, str):
        out.append(encode_basestring(obj))
    elif isinstance(obj, int):
        out.append(str(int(obj)))
    elif isinstance(obj, float):
        out.append(format_number(obj, path))
    elif isinstance(obj, dict):
        for k in obj:
            if not isinstance(k, str):
                raise CanonicalError(f"{path}: object key {k!r} is not a string")
        out.append("{")
        for i, k in enumerate(sorted(obj, key=_utf16_key)):
            if i:
                out.append(",")
            out.append(encode_basestring(k))
            out.append(":")
            _encode(obj[k], out, f"{path}.{k}")
        out.append("}")
    elif isinstance(obj, (list, tuple)):
        out.append("[")
        for i, v in enumerate(obj):
            if i:
                out.append(",")
            _encode(v, out, f"{path}[{i}]")
        out.append("]")
    else:
        raise CanonicalError(f"{path}: {type(obj).__name__} has no JSON form")


def format_number(x: float, path: str = "$") -> str:
    """ECMAScript Number::toString for a finite double (RFC 8785 §3.2.2.3)."""
    if math.isnan(x) or math.isinf(x):
        raise CanonicalError(f"{path}: {x} is not allowed in JSON")
    if x == 0:
        return "0"  # also -0
    if x < 0:
        return "-" + format_number(-x, path)
    # repr() gives the shortest digits that round-trip, as ECMAScript requires.
    _, digit_tuple, exponent = Decimal(repr(x)).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    exponent += len(digit_tuple) - len(digits)  # the zeros stripped
    k = len(digits)
    n = exponent + k  # value = 0.DIGITS * 10**n
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    sign = "+" if e >= 0 else "-"
    head = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{head}e{sign}{abs(e)}"


def header_genesis(header: dict[str, Any]) -> str:
    """`prev` of the first entry of a format-2 journal: the SHA-256 of its header
    line's canonical form, so the hash chain covers the header (run id, created)."""
    return sha256_hex(canonical_bytes(header))


def genesis_of(header: dict[str, Any]) -> str:
    """The first `prev` of the journal that has this header."""
    return GENESIS if header.get("runbook_store") == 1 else header_genesis(header)
