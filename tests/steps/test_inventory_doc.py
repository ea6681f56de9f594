"""docs/inventory.md names every variable the shipped runbook reads: every
`{{ var }}` of steps/*.yaml (commands and criteria), every inventory value a
design comparison named by a step reads, and every variable of the example
inventory. A step or comparator that starts reading a new variable fails here
until the document says what it means."""

from __future__ import annotations

import re
from functools import cache

from runbook.criteria.design_reads import variables_read_by
from runbook.definition.lint import KIND_ROOTS, RUNTIME_ROOTS
from runbook.definition.template import placeholders
from runbook.yamlsafe import load_file

from .helpers import INVENTORY, REPO, STEPS, runbook

DOC = REPO / "docs" / "inventory.md"
# Set by the engine or by a step kind, not by the inventory (docs/steps.md, docs/step-kinds.md).
NOT_INVENTORY = RUNTIME_ROOTS | set().union(*KIND_ROOTS.values()) | {"inventory_hostname_short"}


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


@cache
def template_variables() -> dict[str, str]:
    """variable -> the steps file that first uses it."""
    found: dict[str, str] = {}
    for path in sorted(STEPS.glob("*.yaml")):
        for text in _strings(load_file(path)):
            for p in placeholders(text):
                found.setdefault(p.split(".")[0], path.name)
    return {k: v for k, v in found.items() if k not in NOT_INVENTORY}


@cache
def comparator_variables() -> dict[str, str]:
    """variable -> the comparator (named by a shipped step) that reads it."""
    used = {
        c.value
        for s in runbook().steps
        for a in (s.verify, s.apply, s.rollback)
        if a is not None
        for c in a.expect
        if c.kind == "design"
    }
    found: dict[str, str] = {}
    for name in sorted(used):
        for var in sorted(variables_read_by(name)):
            found.setdefault(var, f"design: {name}")
    return {k: v for k, v in found.items() if k not in NOT_INVENTORY}


def _keys_of_vars(node, out: set[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "vars" and isinstance(value, dict):
                out.update(value)
            elif key == "hosts" and isinstance(value, dict):
                for host in value.values():
                    if isinstance(host, dict):
                        out.update(host)
            else:
                _keys_of_vars(value, out)


def inventory_variables() -> set[str]:
    """The example inventory's and the `runbook init` template's variables."""
    out: set[str] = set()
    for path in (INVENTORY, REPO / "runbook" / "sitekit" / "inventory.yaml"):
        _keys_of_vars(load_file(path), out)
    return out


def documented(name: str) -> bool:
    return re.search(rf"`{re.escape(name)}`", DOC.read_text()) is not None


def test_the_collectors_find_what_they_should():
    # guards against a collector that finds nothing and so passes everything
    assert {"ofed_version", "ib_mode_pci", "nccl_tolerance"} <= set(template_variables())
    assert {"rail_leaves", "gpu_numa", "hca_psids", "sm_master"} <= set(comparator_variables())
    assert {"site", "compute_nics", "sm_priority"} <= inventory_variables()
    assert "before" not in template_variables() and "launch_hosts" not in template_variables()
    assert not documented("no_such_variable_xyz")


def test_every_variable_of_a_step_template_is_documented():
    missing = {k: v for k, v in template_variables().items() if not documented(k)}
    assert missing == {}


def test_every_variable_a_design_comparison_reads_is_documented():
    missing = {k: v for k, v in comparator_variables().items() if not documented(k)}
    assert missing == {}


def test_every_variable_of_the_example_inventory_is_documented():
    assert sorted(k for k in inventory_variables() if not documented(k)) == []


def test_the_ansible_connection_variables_are_documented():
    for name in (
        "ansible_host",
        "ansible_port",
        "ansible_user",
        "ansible_ssh_private_key_file",
        "ansible_ssh_common_args",
        "ansible_become",
        "ansible_become_user",
    ):
        assert documented(name), name
    assert "-J" in DOC.read_text() and "ProxyJump" in DOC.read_text()
