"""Grammar cases for partitions.conf beyond the two published files
(those are checked in test_opensm.py)."""

import pytest

from runbook.parsers import ParseError, parse

SEED_STYLE = """# seed site: compute and storage planes
Default=0x7fff, ipoib, mtu=5, rate=7 : ALL=limited, SELF=full;
compute=0x100, ipoib, mtu=5, defmember=full :
    0x0002c9030009eb3f,            # gpu01 rail 1
    0x0002c9030009eb40=limited ,
    ALL_SWITCHES=full ;
storage = 0x8200 , ipoib : 0x0002c9030009eb41=both ;
compute=0x0100 : mgid=ff12:401b::ffff:ffff,mtu=5 ;
"""


def test_continuation_lines_comments_defmember_and_merge():
    r = parse("partitions-conf", SEED_STYLE)
    assert r["pkeys"] == ["0x7fff", "0x0100", "0x0200"]
    compute = r["by_pkey"]["0x0100"]
    assert compute["flags"] == {"ipoib": True, "mtu": 5, "defmember": "full"}
    assert compute["members"] == [
        {"guid": "0x0002c9030009eb3f", "membership": "full"},  # from defmember
        {"guid": "0x0002c9030009eb40", "membership": "limited"},
        {"guid": "ALL_SWITCHES", "membership": "full"},
    ]
    assert compute["mgroups"] == [{"mgid": "ff12:401b::ffff:ffff", "flags": {"mtu": 5}}]  # merged by PKey
    assert r["by_pkey"]["0x0200"]["members"] == [{"guid": "0x0002c9030009eb41", "membership": "both"}]
    assert r["by_pkey"]["0x0200"]["pkey_raw"] == "0x8200"
    assert "gpu01 rail 1" in r["comments"]


def test_missing_semicolon_is_reported_with_its_line():
    with pytest.raises(ParseError, match="line 2: definition not terminated by ';'"):
        parse("partitions-conf", "Default=0x7fff : ALL=full;\ncompute=0x100 : ALL=full\n")


def test_guid_longer_than_64_bits_is_refused():
    with pytest.raises(ParseError, match="line 1: bad PortGUID"):
        parse("partitions-conf", "p=0x100 : 0x10002c9030009eb3f00=full;\n")


def test_missing_colon_is_refused():
    with pytest.raises(ParseError, match="no ':'"):
        parse("partitions-conf", "compute=0x100 ALL=full;\n")
