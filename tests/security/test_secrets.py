"""Item 6 of issue 16: secrets planted at every depth of the inventory never
reach the completion log, its signature, its Markdown or its HTML."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from runbook.export import export_run
from runbook.inventory.secrets import REDACTED, is_secret_name, redact
from runbook.run.events import HostFinished, HostStarted, StepStarted
from runbook.store import Store
from runbook.workspace.project import load_project

VAULT = "$ANSIBLE_VAULT;1.1;AES256\n6231336566393837363933306131393064366536"

STEPS = """\
phase: p
title: P
steps:
  - id: bmc-reachable
    title: BMC answers
    why: the out-of-band plane
    hosts: all
    verify:
      run: ping -c1 {{ bmc.host }} && echo {{ design.mtu }}
      expect:
        - {exit: 0}
"""

INVENTORY = f"""\
all:
  vars:
    ansible_password: SECRET-ansible-password
    ansible_become_password: SECRET-become
    ansible_ssh_pass: SECRET-ssh-pass
    api_key: SECRET-api-key
    site_token: SECRET-token
    design:
      mtu: 4092
      fabric_credential: SECRET-nested-credential
      switches:
        - name: leaf01
          snmp_community_secret: SECRET-list-secret
          mgmt: {{ enable_password: SECRET-deep-enable }}
  hosts:
    gpu01:
      ansible_host: 127.0.0.1
      ansible_port: 2201
      ipmi_pw: SECRET-ipmi-pw
      bmc:
        host: 10.0.0.11
        password: SECRET-bmc-password
        users:
          - {{ name: admin, passwd: SECRET-bmc-passwd }}
        apiKey: SECRET-camel-api-key
        blob: "{VAULT.replace(chr(10), " ")}"
      vault_db_password: SECRET-vault-var
"""

SECRETS = re.findall(r"SECRET-[\w-]+", INVENTORY) + ["6231336566393837363933306131393064366536"]


def _keygen(path: Path) -> Path:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "alice@example.com", "-f", str(path)],
        check=True,
        timeout=60,
        capture_output=True,
    )
    return path


def test_secret_names() -> None:
    for name in (
        "password",
        "ansible_password",
        "ansible_become_password",
        "ansible_ssh_pass",
        "ipmi_pw",
        "bmcPwd",
        "api_key",
        "apiKey",
        "API-KEY",
        "token",
        "site_token",
        "fabric_credential",
        "secret",
        "private_key",
        "vault_db",
        "passwd",
        "passphrase",
    ):
        assert is_secret_name(name), name
    for name in (
        "ansible_host",
        "ansible_port",
        "mtu",
        "pkeys",
        "ib_pkey",
        "hostname",
        "power",
        "switches",
        "ofed_version",
    ):
        assert not is_secret_name(name), name


def test_redact_every_depth_and_vault_values() -> None:
    data = {"a": {"b": [{"c": {"password": "x", "keep": 1}}]}, "innocent": VAULT, "token": "t"}
    out = redact(data)
    assert out == {
        "a": {"b": [{"c": {"password": REDACTED, "keep": 1}}]},
        "innocent": REDACTED,
        "token": REDACTED,
    }
    assert data["a"]["b"][0]["c"]["password"] == "x"  # the input is not changed


@pytest.fixture
def exported(tmp_path: Path):
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "10-p.yaml").write_text(STEPS)
    (tmp_path / "inv.yaml").write_text(INVENTORY)
    project = load_project(tmp_path / "steps", tmp_path / "inv.yaml")
    step = project.runbook.steps[0]
    store = Store.create(
        tmp_path / "state",
        "run-1",
        site="s",
        operator="alice",
        tool_version="0",
        inventory_sha256=project.inventory.sha256,
        runbook_sha256=project.runbook.sha256,
    )
    cmd = "ping -c1 10.0.0.11 && echo 4092"
    store.append_many(
        [
            StepStarted(step.id, "verify", ("gpu01",), step.sha256),
            HostStarted(step.id, "verify", "gpu01", cmd),
        ]
    )
    store.append_many([HostFinished(step.id, "verify", "gpu01", "pass", "", cmd, 0, "ok\n", "", 1.0, 2.0)])
    snapshot = store.snapshot(project.runbook, project.inventory)
    store.close()
    key = _keygen(tmp_path / "id_ed25519")
    result = export_run(
        snapshot, tmp_path / "out" / "log.json", sign_key=str(key), identity="alice@example.com"
    )
    return result, tmp_path / "out"


def test_no_planted_secret_in_any_exported_file(exported) -> None:
    result, out = exported
    assert len(SECRETS) == 14
    files = sorted(out.iterdir())
    assert {f.name for f in files} >= {"log.json", "log.json.sig", "log.md", "log.html"}
    for f in files:
        text = f.read_text(errors="replace")
        for secret in [*SECRETS, "SECRET-", "ANSIBLE_VAULT"]:
            assert secret not in text, f"{secret} in {f.name}"


def test_log_keeps_the_variables_the_run_used(exported) -> None:
    import json

    result, _ = exported
    hosts = json.loads(result.log.read_text())["inventory"]["hosts"]
    gpu01 = hosts["gpu01"]
    # used by the step (bmc, design) and the addressing; not the rest of the inventory
    assert set(gpu01) == {"ansible_host", "ansible_port", "bmc", "design"}
    assert gpu01["bmc"]["host"] == "10.0.0.11" and gpu01["bmc"]["password"] == REDACTED
    assert gpu01["design"]["mtu"] == 4092
    assert gpu01["design"]["switches"][0]["mgmt"]["enable_password"] == REDACTED


def test_the_log_keeps_what_a_design_comparison_read(tmp_path) -> None:
    """A step judged by `design: rail-cabling` reads compute_nics, rail_leaves and
    ib_port_guids: the log records them (the report redraws the rail picture
    from them), secrets still redacted, unrelated values still left out."""
    from runbook.definition.loader import load_runbook
    from runbook.inventory.load import load_inventory
    from runbook.store.snapshot import _inventory

    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "10-p.yaml").write_text(
        "phase: p\ntitle: P\nsteps:\n  - id: rails\n    title: t\n    why: w\n    hosts: all\n"
        "    verify:\n      run: iblinkinfo\n      parse: iblinkinfo\n      expect:\n"
        "        - {design: rail-cabling}\n"
    )
    (tmp_path / "inv.yaml").write_text(
        "all:\n  vars:\n    rail_leaves: {1: leaf01}\n    unrelated: 1\n    api_key: SECRET-k\n"
        "  hosts:\n    gpu01:\n      compute_nics: [{dev: mlx5_0, rail: 1, pci: '18:00.0'}]\n"
        "      ib_port_guids: {'0000:18:00.0': '0xb83fd20300a1b2c3'}\n"
    )
    logged = _inventory(load_inventory(tmp_path / "inv.yaml"), load_runbook(tmp_path / "steps"))
    gpu01 = logged["hosts"]["gpu01"]
    assert {"rail_leaves", "compute_nics", "ib_port_guids"} <= set(gpu01)
    assert "unrelated" not in gpu01 and "api_key" not in gpu01
