"""A simulated lab behind a real OpenSSH jump host on loopback: the CLI's
verify steps through the jump (`ansible_ssh_common_args: -J gw`, the jump host
in ~/.ssh/config) give the same verdicts as direct, and the host keys of both
hops are verified: a jump host whose key is not the known one makes every host
`unknown`, never `pass` (bench/gateway.py measures what the hop costs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import asyncssh
import pytest
import yaml

from runbook.sim.procs import SimProcess, random_base
from tests.sshd_server import sshd_server  # noqa: F401  (fixture)

REPO = Path(__file__).resolve().parents[2]
STEPS = ["hostname-matches", "ofed-version", "ofed-kernel-match"]  # the last needs the second
FAULTS = {"gpu02": ["ofed_version_drift"]}


@pytest.fixture
def lab(tmp_path):
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump({"faults": FAULTS}))
    with SimProcess(
        tmp_path / "lab", nodes=3, scenario=scenario, base_address=random_base(), lifetime=300
    ) as sim:
        yield sim


def home_with_gateway(home: Path, srv, known_hosts: Path) -> Path:
    """A HOME whose ~/.ssh/config says how to reach the jump host `gw`."""
    (home / ".ssh").mkdir(parents=True, exist_ok=True)
    (home / ".ssh" / "config").write_text(
        f"Host gw\n    HostName {srv.addr}\n    Port {srv.port}\n    User {srv.user}\n"
        f"    IdentityFile {srv.client_key}\n    UserKnownHostsFile {known_hosts}\n"
    )
    return home


def behind_gateway(sim: SimProcess) -> Path:
    doc = yaml.safe_load(sim.inventory.read_text())
    doc["all"]["vars"]["ansible_ssh_common_args"] = "-J gw"
    path = sim.dir / "inventory-via-gw.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def verify(tmp_path: Path, inventory: Path, home: Path, state: str) -> dict:
    argv = [sys.executable, "-m", "runbook", "run", "--json", "--new-run"]
    for step in STEPS:
        argv += ["--step", step]
    argv += ["--steps", str(REPO / "steps"), "--inventory", str(inventory), "--state", str(tmp_path / state)]
    env = dict(os.environ, RUNBOOK_OPERATOR="tester", PYTHONPATH=str(REPO), HOME=str(home))
    proc = subprocess.run(
        argv, capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL, cwd=REPO
    )
    doc = json.loads(proc.stdout)
    return {
        (s["id"], host): (h["status"], h.get("reason") or "")
        for s in doc["steps"]
        for host, h in (s.get("hosts") or {}).items()
    }


def test_verdicts_through_a_jump_host_equal_direct(tmp_path, lab, sshd_server):
    known = tmp_path / "gw_known_hosts"
    known.write_text(sshd_server.known_hosts_line())
    home = home_with_gateway(tmp_path / "home", sshd_server, known)

    direct = verify(tmp_path, lab.inventory, home, "direct")
    via = verify(tmp_path, behind_gateway(lab), home, "via-gw")

    assert via == direct
    statuses = {status for status, _ in direct.values()}
    assert {"pass", "fail"} <= statuses and "unknown" not in statuses, direct
    assert direct[("ofed-version", "gpu02")][0] == "fail"
    assert direct[("ofed-kernel-match", "gpu02")][0] == "blocked"


def test_a_jump_host_with_another_key_is_refused(tmp_path, lab, sshd_server):
    stranger = asyncssh.generate_private_key("ssh-ed25519").export_public_key("openssh").decode().split()
    known = tmp_path / "gw_known_hosts"  # the jump host's name with a key it does not hold
    known.write_text(f"[{sshd_server.addr}]:{sshd_server.port} {stranger[0]} {stranger[1]}\n")
    home = home_with_gateway(tmp_path / "home", sshd_server, known)

    via = verify(tmp_path, behind_gateway(lab), home, "via-gw")

    assert via
    for (step, host), (status, reason) in via.items():
        if step == "ofed-kernel-match":  # needs ofed-version, not verified either
            assert (status, reason) == ("blocked", "needs ofed-version, which is unknown on this host")
        else:
            assert status == "unknown", (step, host, status, reason)
            assert reason.startswith("host key refused") and "gw" in reason, reason
