"""Criteria described with the host's values (issue 17, item 5): the plan, the
TUI's step pane and the report read "version eq MLNX_OFED_LINUX-23.10-1.1.9.0",
never "{{ ofed_version }}", and each design comparison names the design's values."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from runbook.criteria.describe import describe, describe_design
from runbook.criteria.design import comparators
from runbook.criteria.spec import parse_check

REPO = Path(__file__).resolve().parents[2]


def check(raw):
    c, problems = parse_check(raw, 1)
    assert not problems, problems
    return c


def test_path_and_reference_criteria_show_the_hosts_values():
    v = {"ofed_version": "23.10-1.1.9.0", "nccl_intra_busbw_gbs": 18.5, "nccl_tolerance": -0.10}
    assert describe(check({"path": "version", "eq": "{{ ofed_version }}"}), v) == "version eq 23.10-1.1.9.0"
    ref = check({"path": "busbw", "reference": "{{ nccl_intra_busbw_gbs }}", "lower": "{{ nccl_tolerance }}"})
    assert describe(ref, v) == "busbw ≥ 18.5 GB/s − 10 %"
    # the shipped names end in _gbps, but nccl-tests' busbw is in GB/s (bytes: docs/inventory.md)
    shipped = check({"path": "busbw", "reference": "{{ nccl_inter_busbw_gbps }}", "lower": -0.1})
    assert describe(shipped, {"nccl_inter_busbw_gbps": 38.0}).startswith("busbw ≥ 38 GB/s")
    assert describe(
        check({"path": "bw", "ge": "{{ ib_pair_bw_min_gbps }}"}), {"ib_pair_bw_min_gbps": 190}
    ) == ("bw ≥ 190 Gb/s")
    both = check({"path": "busbw", "reference": 40, "lower": -0.1, "upper": 0.05})
    assert describe(both, {}) == "40 − 10 % ≤ busbw ≤ 40 + 5 %"
    assert describe(check({"path": "mtu", "ge": 4096}), v) == "mtu ≥ 4096"
    # without variables (no host chosen): as written, placeholder kept
    assert describe(check({"path": "version", "eq": "{{ ofed_version }}"})) == "version eq {{ ofed_version }}"


def test_a_variable_the_host_lacks_is_said_not_hidden():
    text = describe(check({"path": "version", "eq": "{{ nope }}"}), {})
    assert "cannot fill in" in text and "nope" in text


def test_every_comparator_has_a_description_naming_design_values():
    v = {
        "gpus_per_node": 8,
        "gpu_pci_id": "10de:26b9",
        "rail_leaves": {1: "leaf01", 2: "leaf02"},
        "ib_rate_gbps": 200,
    }
    for name, comp in comparators().items():
        assert comp.describe, f"{name} has no description"
        assert describe_design(name, None).startswith(f"as designed ({name}): ")
    assert describe_design("gpu-inventory", v) == "as designed (gpu-inventory): 8 GPUs with PCI id 10de:26b9"
    assert "1→leaf01, 2→leaf02" in describe_design("rail-cabling", v)
    assert "200 Gb/s" in describe_design("ib-ports", v)


def _plan(*args):
    p = subprocess.run(
        [sys.executable, "-m", "runbook", "plan", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_plan_shows_criteria_with_the_inventorys_values():
    doc = json.loads(_plan("--format", "json", "--step", "ofed-version", "--hosts", "gpu[01-03]"))
    crit = doc["phases"][0]["steps"][0]["verify"]["criteria"]
    assert "version eq MLNX_OFED_LINUX-23.10-1.1.9.0" in crit
    text = _plan()
    assert "{{" not in "".join(ln for ln in text.splitlines() if ln.strip().startswith("expect"))
    assert "busbw ≥ 18.5" in text and "− 10 %" in text
    assert "matches the design (" not in text
    assert "as designed (gpu-inventory): 8 GPUs with PCI id 10de:26b9" in text


def test_plan_folds_criteria_that_name_each_host():
    md = _plan("--format", "md")
    # the hostname step's criterion differs on each host: one example, not 50 lines
    assert md.count("stdout matches '^gpu02$'") == 0
    assert "(per host; shown for `gpu01`)" in md


@pytest.mark.parametrize("name", sorted(comparators()))
def test_each_design_description_names_only_variables_it_fills(name):
    # every variable-looking word of a description is filled when the design defines it
    v = {
        w: "VALUE"
        for w in comparators()[name].describe.replace("/", " ").replace(",", " ").split()
        if "_" in w and w.islower()
    }
    assert "_" not in "".join(w for w in describe_design(name, v).split() if w.isidentifier() and w in v)
