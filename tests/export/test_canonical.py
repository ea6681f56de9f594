"""Canonical JSON against RFC 8785's own examples."""

from __future__ import annotations

import json
import struct

import pytest

from runbook.store.canonical import GENESIS, CanonicalError, canonical_bytes, journal_entry_hash, sha256_hex

# RFC 8785 Appendix B: IEEE-754 bit patterns and their serialisation.
RFC_NUMBERS = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


@pytest.mark.parametrize("bits,expected", RFC_NUMBERS)
def test_numbers_follow_rfc8785_appendix_b(bits: str, expected: str) -> None:
    value = struct.unpack(">d", bytes.fromhex(bits))[0]
    assert canonical_bytes(value).decode() == expected


def test_rfc8785_example_document() -> None:
    text = (
        '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
        ' "literals": [null, true, false]}'
    )
    expected = (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )
    assert canonical_bytes(json.loads(text)) == expected.encode("utf-8")


def test_member_names_sort_by_utf16_code_units() -> None:
    names = ["\u20ac", "\r", "\ufb33", "1", "\U0001f600", "\u0080", "\u00f6"]
    out = json.loads(canonical_bytes({n: 0 for n in names}))
    assert list(out) == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]


@pytest.mark.parametrize(
    "bad", [float("nan"), float("inf"), {1: "int key"}, {"s": {1, 2}}, "lone \ud800 surrogate"]
)
def test_values_without_a_canonical_form_are_refused(bad: object) -> None:
    with pytest.raises(CanonicalError):
        canonical_bytes(bad)


def test_same_content_same_bytes_whatever_the_insertion_order() -> None:
    a = {"b": [1.0, 2.5, {"y": None, "x": True}], "a": "é"}
    b = {"a": "é", "b": [1, 2.5, {"x": True, "y": None}]}
    expected = '{"a":"é","b":[1,2.5,{"x":true,"y":null}]}'.encode()
    assert canonical_bytes(a) == canonical_bytes(b) == expected
    # A round trip through a JSON parser gives the same bytes again.
    assert canonical_bytes(json.loads(canonical_bytes(a))) == canonical_bytes(a)


def test_big_integers_are_written_exactly() -> None:
    guid = 0x248A0703009C1234  # a 64-bit port GUID: a double would round it
    assert canonical_bytes(guid) == str(guid).encode()
    assert json.loads(canonical_bytes({"g": guid}))["g"] == guid


def test_journal_hash_rule() -> None:
    event = {"type": "RunFinished", "status": "pass", "time": 1732900000.5}
    expected = sha256_hex(
        b'{"event":{"status":"pass","time":1732900000.5,"type":"RunFinished"},'
        b'"prev":"' + GENESIS.encode() + b'","seq":0}'
    )
    assert journal_entry_hash(0, GENESIS, event) == expected
