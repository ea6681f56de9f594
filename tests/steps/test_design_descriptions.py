"""What the plan, the TUI and the report say a design comparison checks, with
the example inventory's values: every design variable the description names is
filled in, and it reads as a sentence ("every GPU link at x16", not "x x16")."""

import re

import pytest

from runbook.criteria.describe import describe_design
from runbook.inventory.load import select_hosts

from .helpers import inventory, runbook, seed_vars


def _design_checks():
    for step in runbook().steps:
        for check in step.verify.expect if step.verify else ():
            if check.kind == "design":
                yield step, check.value


@pytest.mark.parametrize("step,name", list(_design_checks()), ids=lambda x: x if isinstance(x, str) else x.id)
def test_each_shipped_design_check_reads_with_the_designs_values(step, name):
    host = select_hosts(inventory(), step.hosts)[0]
    variables = seed_vars(host)
    text = describe_design(name, variables)
    left = [w for w in re.findall(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+", text) if w in variables]
    # a variable may stay named when its value is a list or mapping: "compute_nics (4: mlx5_0, ...)"
    unfilled = [w for w in left if f"{w} (" not in text]
    assert unfilled == [], text
    assert not re.search(r"\bx x\d", text), text


def test_the_gpu_link_width_reads_as_a_width():
    text = describe_design("pcie-link-gpu", seed_vars("gpu01"))
    assert "every GPU link at x16, LnkCap 16GT/s / x16" in text
