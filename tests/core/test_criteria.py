from runbook.criteria.fleet import consistency, judge_fleet
from runbook.criteria.host import judge_host
from runbook.criteria.spec import parse_check
from runbook.criteria.verdict import Verdict
from runbook.definition.model import Action, Status


def action(*raw, parse=None):
    checks = []
    for i, r in enumerate(raw):
        c, problems = parse_check(r, i + 1)
        assert not problems, problems
        checks.append(c)
    return Action(run="x", parse=parse, expect=tuple(checks))


def test_exit_status_default_and_explicit():
    assert judge_host(action(), 0, "", {}).status == Status.PASS
    v = judge_host(action(), 3, "", {})
    assert v.status == Status.FAIL and "exit status 3 (expected 0)" in v.reason
    assert judge_host(action({"exit": 3}), 3, "", {}).status == Status.PASS
    assert judge_host(action({"exit": [0, 1]}), 2, "", {}).status == Status.FAIL


def test_stdout_matchers_say_expected_vs_found():
    a = action({"contains": "InfiniBand"}, {"not_matches": "ETH|Ethernet"})
    assert judge_host(a, 0, "InfiniBand\n", {}).status == Status.PASS
    v = judge_host(a, 0, "Ethernet\n", {})
    assert v.status == Status.FAIL
    assert "containing 'InfiniBand'" in v.reason and "found 'Ethernet'" in v.reason


def test_path_checks_typed_and_templated():
    rec = {"LINK_TYPE_P1": "ETH(2)", "ports": [{"rate": "200"}, {"rate": 100}], "version": "23.10-1.1.9"}
    a = action({"path": "LINK_TYPE_P1", "eq": "IB(1)"}, parse="x")
    v = judge_host(a, 0, "", {}, rec)
    assert v.status == Status.FAIL and v.reason == "LINK_TYPE_P1: expected 'IB(1)', found 'ETH(2)'"
    a = action({"path": "ports[*].rate", "ge": "{{ rate }}"}, parse="x")
    v = judge_host(a, 0, "", {"rate": 200}, rec)
    assert v.status == Status.FAIL and "found 100" in v.reason
    a = action({"path": "ports", "count": 2}, {"path": "version", "semver": ">=23.10"}, parse="x")
    assert judge_host(a, 0, "", {}, rec).status == Status.PASS
    a = action({"path": "ports", "count": {"ge": 3}}, parse="x")
    assert "expected count ≥ 3, found 2" in judge_host(a, 0, "", {}, rec).reason


def test_reference_with_tolerance():
    a = action({"path": "busbw", "reference": "{{ base }}", "lower": -0.10}, parse="x")
    assert judge_host(a, 0, "", {"base": 18.5}, {"busbw": 17.0}).status == Status.PASS
    v = judge_host(a, 0, "", {"base": 18.5}, {"busbw": 13.0})
    assert v.status == Status.FAIL and "reference 18.5" in v.reason and "-29.7%" in v.reason


def test_missing_evidence_is_unknown_never_pass():
    a = action({"path": "LINK_TYPE_P1", "eq": "IB(1)"}, parse="x")
    v = judge_host(a, 0, "", {}, {"OTHER": 1})
    assert v.status == Status.UNKNOWN and "no such value" in v.reason
    v = judge_host(a, 0, "garbage", {}, None, "could not read mlxconfig output: no table")
    assert v.status == Status.UNKNOWN
    # a non-number where a number is needed cannot be judged either
    a = action({"path": "rate", "ge": 200}, parse="x")
    assert judge_host(a, 0, "", {}, {"rate": "fast"}).status == Status.UNKNOWN


def test_malformed_criteria_are_reported():
    for raw, needle in [
        ({"path": "x", "eqq": 1}, "unknown operator"),
        ({"path": "x"}, "exactly one operator"),
        ({"matches": "("}, "invalid regular expression"),
        ({"exit": "zero"}, "integer"),
        ({"design": "nope"}, "unknown design"),
        ("text", "mapping"),
        ({"path": "x", "count": "many"}, "count expects"),
    ]:
        c, problems = parse_check(raw, 1)
        assert c is None and any(needle in p for p in problems), (raw, problems)


def test_consistency_names_majority_and_outliers():
    obs = {f"gpu{i:02d}": ({"version": "A"}, "") for i in range(1, 6)}
    obs["gpu03"] = ({"version": "B"}, "")
    res = consistency("version", obs)
    assert res["gpu01"] is None
    assert res["gpu03"] == "version: found 'B', fleet majority 'A' (4/5 hosts); outliers gpu03"


def test_consistency_split_fails_everyone():
    res = consistency("v", {"a1": ({"v": 1}, ""), "a2": ({"v": 2}, "")})
    assert all("no majority" in r for r in res.values())


def test_judge_fleet_keeps_unknown_hosts_out_of_the_vote():
    a = action({"consistent": "stdout"})
    verdicts = {
        "h1": Verdict(Status.PASS),
        "h2": Verdict(Status.PASS),
        "h3": Verdict(Status.PASS),
        "h4": Verdict(Status.UNKNOWN, "unreachable"),
    }
    out = judge_fleet(a, verdicts, {}, {"h1": "x", "h2": "x", "h3": "y"}, {})
    assert out["h1"].status == Status.PASS and out["h3"].status == Status.FAIL
    assert out["h4"].status == Status.UNKNOWN and out["h4"].reason == "unreachable"
