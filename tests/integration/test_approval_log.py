"""Approvals in the signed log record the commands as they ran on the hosts,
with the inventory's values filled in, never the step's `{{ }}` template
(issue 17, "Plan, TUI and log show real values")."""

import json

import asyncssh
import pytest

from runbook.sim.procs import SimProcess, random_base
from runbook.sim.scenario import DEFAULT

from .conftest import runbook_cli


def _strings(value, path=""):
    """Every string in a JSON document, with where it is."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{path}[{i}]")
    elif isinstance(value, str):
        yield path, value


@pytest.fixture(scope="module")
def small_lab(tmp_path_factory):
    """8 nodes with the demo scenario: its LINK_TYPE fault lands on gpu07."""
    lab = SimProcess(
        tmp_path_factory.mktemp("lab"),
        nodes=8,
        scenario=DEFAULT,
        base_address=random_base(),
        port=0,
        lifetime=300,
        reboot_seconds=0.5,
    )
    lab.start()
    yield lab
    lab.stop()


@pytest.mark.slow
def test_approvals_in_the_log_carry_the_rendered_commands(small_lab, tmp_path):
    state, inv = tmp_path / "state", small_lab.inventory
    runbook_cli("run", "--step", "mst-started", state=state, inventory=inv, check_rc=0)
    runbook_cli(
        "run", "--step", "link-type-ib", "--action", "apply", "--yes", state=state, inventory=inv, check_rc=0
    )
    runbook_cli("run", "--step", "link-type-ib", "--action", "rollback", "--yes", state=state, inventory=inv)
    key = asyncssh.generate_private_key("ssh-ed25519", comment="tester@site")
    key.write_private_key(str(tmp_path / "key"))
    (tmp_path / "key").chmod(0o600)
    out = tmp_path / "log.json"
    runbook_cli(
        "export", "--sign-key", str(tmp_path / "key"), "-o", str(out), state=state, inventory=inv, check_rc=0
    )
    log = json.loads(out.read_text())

    approvals = [d for d in log["decisions"] if d["kind"] == "approve"]
    assert [d["reason"].split(" ", 1)[0] for d in approvals] == ["apply", "rollback"]
    # the inventory's PCI addresses (ib_mode_pci), filled in word by word
    assert "for d in 0000:18:00.0 0000:20:00.0 0000:98:00.0" in approvals[0]["reason"]
    for d in approvals:
        assert d["hosts"] == "gpu07"
        assert d["commands"] and d["commands"][0]["command"] in d["reason"]
    journal_reasons = [
        e["event"]["reason"]
        for e in log["journal"]["entries"]
        if e["event"].get("type") == "OperatorDecision" and e["event"].get("kind") == "approve"
    ]
    assert journal_reasons == [d["reason"] for d in approvals]

    # Only the step definitions (the runbook's source, hashed as written) hold templates.
    leaks = [
        (where, text[:120])
        for where, text in _strings(log)
        if "{{" in text and not where.startswith(".steps[")
    ]
    assert leaks == []
