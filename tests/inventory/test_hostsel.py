"""select_hosts (groups, hosts, NodeSet patterns, set operators) and fold."""

from __future__ import annotations

import random

import pytest
from ClusterShell.NodeSet import NodeSet, NodeSetParseError

from runbook.errors import UsageError
from runbook.inventory.hostsel import HostSelectionError, fold, select_hosts, unfold
from runbook.inventory.load import load_inventory

from .cases import CASES, DATA

GPUS = [f"gpu{i:02d}" for i in range(1, 49)]


@pytest.fixture(scope="module")
def cluster():
    return load_inventory(DATA / "cluster.yaml")


@pytest.fixture(scope="module")
def nested():
    return load_inventory(CASES["nested"][0])


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("sm", ["sm01", "sm02"]),
        ("@sm", ["sm01", "sm02"]),
        ("compute", GPUS),
        ("all", GPUS + ["sm01", "sm02"]),
        ("gpu07", ["gpu07"]),
        ("gpu[01-48]", GPUS),
        ("gpu[01-03,07]", ["gpu01", "gpu02", "gpu03", "gpu07"]),
        ("compute!gpu07", [g for g in GPUS if g != "gpu07"]),
        ("gpu[01-48]!gpu07", [g for g in GPUS if g != "gpu07"]),
        ("compute&sm", []),
        ("compute,sm", GPUS + ["sm01", "sm02"]),
        ("sm,compute", GPUS + ["sm01", "sm02"]),  # inventory order, whatever the expression's order
        ("sm02,gpu03,sm01", ["gpu03", "sm01", "sm02"]),
        ("gpu[01-03]^gpu[02-04]", ["gpu01", "gpu04"]),
        ("all&gpu[10-12]", ["gpu10", "gpu11", "gpu12"]),
        (" compute ! gpu[02-48] , sm ", ["gpu01", "sm01", "sm02"]),
    ],
)
def test_selection(cluster, expr, expected):
    assert select_hosts(cluster, expr) == expected


def test_operators_apply_left_to_right_like_nodeset(cluster):
    # ((sm , gpu01) & compute): no precedence of & over ,
    assert select_hosts(cluster, "sm,gpu01&compute") == ["gpu01"]
    assert select_hosts(cluster, "gpu01&compute,sm") == ["gpu01", "sm01", "sm02"]
    # the same strings evaluated by ClusterShell itself on plain node names
    assert list(NodeSet("sm[01-02],gpu01&gpu[01-48]")) == ["gpu01"]


def test_nested_groups_include_their_children(nested):
    assert select_hosts(nested, "compute") == [f"node{i:02d}" for i in range(1, 9)]
    assert select_hosts(nested, "cluster!compute") == ["stor1", "stor2", "stor3"]
    assert select_hosts(nested, "monitoring&storage") == ["node04", "stor1", "stor2", "stor3"]
    assert select_hosts(nested, "ungrouped") == ["mgmt01", "spare01"]
    assert select_hosts(nested, "switches") == []  # an empty group is known, selects nothing


def test_unknown_names_are_listed_not_dropped(cluster):
    with pytest.raises(HostSelectionError) as info:
        select_hosts(cluster, "compute!gpu99,foo,@bar,gpu[47-50]")
    err = info.value
    assert isinstance(err, UsageError) and isinstance(err, ValueError)
    assert err.unknown == ["@bar", "gpu99", "foo", "gpu49", "gpu50"]
    assert str(err) == (
        "host selection 'compute!gpu99,foo,@bar,gpu[47-50]': no such group: @bar; "
        "no such group or host: gpu99, foo; no such host: gpu[49-50] "
        "(groups: all, ungrouped, compute, sm)"
    )


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("", "empty host selection"),
        ("   ", "empty host selection"),
        ("compute,", "an operator needs a group, host or pattern on each side"),
        ("!gpu01", "an operator needs a group, host or pattern on each side"),
        ("gpu[01-48", "unbalanced brackets"),
        ("gpu[01:48]", "NodeSet ranges use '-': gpu[01-48], not gpu[01:48]"),
        ("gpu[48-01]", "bad pattern 'gpu[48-01]'"),
        ("compute:!gpu07", "no such group or host: compute: (combine with NodeSet's , ! & ^"),
    ],
)
def test_malformed_expressions(cluster, expr, message):
    with pytest.raises(HostSelectionError) as info:
        select_hosts(cluster, expr)
    assert message in str(info.value)


def test_fold():
    assert fold(["gpu07", "gpu13", "gpu21", "gpu22"]) == "gpu[07,13,21-22]"
    assert fold(["sm01", "gpu22", "gpu07", "gpu21", "gpu13", "gpu07"]) == "gpu[07,13,21-22],sm01"
    assert fold(GPUS) == "gpu[01-48]"
    assert fold(["10.0.0.1", "10.0.0.2"]) == "10.0.0.[1-2]"
    assert fold([]) == ""
    assert fold(iter(["a"])) == "a"
    assert fold(["odd,name", "b"]) == "odd,name,b"  # not foldable: listed as they are


def test_fold_round_trips_through_select(cluster):
    rng = random.Random(7)
    names = list(cluster.hosts)
    for _ in range(50):
        subset = [h for h in names if rng.random() < 0.3] or ["sm01"]
        assert select_hosts(cluster, fold(subset)) == subset


def test_unfold_reads_a_folded_string_as_nodeset_does():
    """A decision's hosts are recorded folded and read back with unfold (run/state.py,
    store/progress.py, store/journal.py): the names NodeSet gives, for any fold."""
    rng = random.Random(11)
    for _ in range(50):
        subset = [g for g in GPUS if rng.random() < 0.3] + (["sm01"] if rng.random() < 0.5 else [])
        if not subset:
            continue
        assert unfold(fold(subset)) == frozenset(subset) == frozenset(NodeSet(fold(subset)))
    assert unfold("gpu[01-03],sm[01-02]") == {"gpu01", "gpu02", "gpu03", "sm01", "sm02"}
    with pytest.raises(NodeSetParseError):  # NodeSet's own error, as before (store/journal.py words it)
        unfold("gpu[01")
