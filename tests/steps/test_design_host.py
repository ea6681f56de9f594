"""Host-side design comparisons added for real sites: the subnet's SMs seen
from a compute node (saquery -s + sminfo, for SMs on switches or UFM), the
package sources against the mirror, managed files against a designed digest."""

from __future__ import annotations

import pytest

from runbook import parsers
from runbook.criteria.design import comparators

from .helpers import fixture


def compare(name, record, variables):
    return comparators()[name].func(record, variables)


def survey(*lines: str):
    return parsers.parse("sm-survey", "".join(line + "\n" for line in lines))


MASTER = "sminfo: sm lid 1 sm guid 0xb8599f0320000100, activity count 4312 priority 15 state 3 SMINFO_MASTER"
STANDBY = "sminfo: sm lid 2 sm guid 0xb8599f0320000200, activity count 12 priority 14 state 2 SMINFO_STANDBY"


def test_sm_survey_reads_the_real_sminfo_outputs():
    # every real sminfo capture: one SM answering, with or without a state, or none
    master = parsers.parse("sm-survey", fixture("sminfo/ibsim-lab-master"))
    assert [s["state_short"] for s in master["sms"]] == ["MASTER"] and master["errors"] == []
    old = parsers.parse("sm-survey", fixture("sminfo/OFED-README-example-old"))
    assert (
        len(old["sms"]) == 1 and old["sms"][0]["state_short"] is None
    )  # old format: no state, never guessed
    none = parsers.parse("sm-survey", fixture("sminfo/OFED-README-no-SM"))
    assert none["sms"] == [] and none["errors"]


def test_sm_subnet_one_master_and_a_standby_wherever_they_run():
    v = {}
    assert compare("sm-subnet", survey(MASTER, STANDBY), v) == []
    assert compare("sm-subnet", survey(MASTER), v) == [
        "no STANDBY SM: the next failure of the master takes the subnet down (LID 1 MASTER (priority 15))"
    ]
    two = survey(MASTER, STANDBY.replace("state 2 SMINFO_STANDBY", "state 3 SMINFO_MASTER"))
    assert compare("sm-subnet", two, v)[0].startswith("expected exactly one MASTER, found 2")
    assert compare("sm-subnet", survey(), v) == [
        "no subnet manager answers (saquery -s listed none or sminfo failed)"
    ]
    designed = {"sm_master_guid": "0xb8599f0320000200"}
    assert compare("sm-subnet", survey(MASTER, STANDBY), designed) == [
        "MASTER is GUID 0xb8599f0320000100, designed 0xb8599f0320000200 (sm_master_guid)"
    ]


def test_sm_survey_refuses_other_text():
    with pytest.raises(parsers.ParseError):
        parsers.parse("sm-survey", "PortInfoRecord dump:\n\t\tEndPortLid..............1\n")


def test_mirror_only_comparator():
    record = parsers.parse(
        "package-sources",
        "/etc/yum.repos.d/a.repo:[a]\n/etc/yum.repos.d/a.repo:baseurl="
        "http://m.example/x/\nglobal.index-url='http://m.example/pypi/'\n",
    )
    assert compare("mirror-only", record, {"repo_mirror": "http://m.example/"}) == []
    assert compare("mirror-only", record, {"repo_mirror": "http://m.example.org/"}) == [
        "/etc/yum.repos.d/a.repo [a] enabled, points outside http://m.example.org/: http://m.example/x/",
        "pip: global.index-url='http://m.example/pypi/' is outside http://m.example.org/",
    ]


def test_etc_consistent_designed_digest_beats_the_vote():
    a, b = "a" * 64, "b" * 64
    records = {h: {"files": {"/etc/x.conf": a}} for h in ("n1", "n2", "n3")}
    plain = {h: {"managed_etc_files": ["/etc/x.conf"]} for h in records}
    assert all(p == [] for p in comparators()["etc-consistent"].func(records, plain).values())
    designed = {h: dict(v, managed_etc_sha256={"/etc/x.conf": b}) for h, v in plain.items()}
    out = comparators()["etc-consistent"].func(records, designed)
    assert out["n1"] == [
        f"/etc/x.conf: sha256 {a[:12]}…, designed {b[:12]}… (managed_etc_sha256); 3/3 hosts have this one"
    ]
