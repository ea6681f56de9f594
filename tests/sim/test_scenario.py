"""Scenario files: the fault menu's names, FILE:LINE errors, the shipped scenarios."""

import pytest

from runbook.errors import InputError
from runbook.sim import scenario
from runbook.sim.cluster import Cluster


def build(design, tmp_path, text, nodes=8, strict=True):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    cluster = Cluster.build(design, nodes)
    return path, cluster, scenario.apply(cluster, path, strict=strict)


def problems(design, tmp_path, text, nodes=8):
    with pytest.raises(InputError) as info:
        build(design, tmp_path, text, nodes)
    return str(info.value).replace(str(tmp_path / "s.yaml"), "FILE")


def test_unknown_fault_and_node_are_file_line_errors(design, tmp_path):
    text = "faults:\n  gpu07: [link_type_eth]\n  gpu99: [clock_skew]\n  gpu02:\n    - link_typo\n"
    msg = problems(design, tmp_path, text)
    assert "FILE:5: unknown fault 'link_typo'" in msg
    assert "FILE:3: unknown node 'gpu99' (the cluster has gpu[01-08],sm[01-02])" in msg


def test_fault_on_the_wrong_kind_of_node(design, tmp_path):
    msg = problems(design, tmp_path, "faults:\n  gpu01: [pkey_missing]\n  sm01: [{pcie_x8: gpu3}]\n")
    assert "FILE:2: pkey_missing on gpu01: pkey_missing applies to sm nodes, gpu01 is a compute node" in msg
    assert "FILE:3: pcie_x8 on sm01" in msg


def test_bad_target_and_bad_shape(design, tmp_path):
    msg = problems(design, tmp_path, "faults:\n  gpu01: [{link_type_eth: mlx5_9}]\nextra: 1\n")
    assert "FILE:2: link_type_eth on gpu01: gpu01 has no device 'mlx5_9'" in msg
    assert "FILE:3: unknown key 'extra'" in msg
    assert "FILE:3: YAML: duplicate key" in problems(
        design, tmp_path, "faults:\n  gpu01: [hang]\n  gpu01: [slow]\n"
    )


def test_node_sets_expand(design, tmp_path):
    _, cluster, applied = build(design, tmp_path, "faults:\n  'gpu[02-04]': [clock_skew]\n")
    assert [e.node for e in applied] == ["gpu02", "gpu03", "gpu04"]
    assert cluster.nodes["gpu03"].clock_offset_s == 2.35 and cluster.nodes["gpu05"].clock_offset_s < 0.001


def test_shipped_scenarios(design):
    cluster = Cluster.build(design, 48)
    applied = scenario.apply(cluster, scenario.DEFAULT)
    assert 6 <= len(applied) <= 10
    assert cluster.nodes["gpu07"].faults == ["link_type_eth"]
    small = Cluster.build(design, 16)  # the demo scenario on a small cluster: extra nodes are skipped
    assert {e.node for e in scenario.apply(small, scenario.DEFAULT, strict=False)} == {
        "gpu07",
        "gpu13",
        "sm02",
    }
    empty = Cluster.build(design, 4)
    assert scenario.apply(empty, scenario.EMPTY) == []
