"""Where `runbook sim` listens (issue 17): a free range when the default is
taken (and it says so), the truth about ports with --port 0, every node on
127.0.0.1 with its own port where that is the only loopback address (macOS;
forced here with --single-address), and demo faults placed by position."""

import errno
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from runbook.errors import InputError
from runbook.sim import scenario
from runbook.sim.addresses import DEFAULT_BASE, DEFAULT_PORT, describe
from runbook.sim.cluster import Cluster

from .conftest import next_base

REPO = Path(__file__).resolve().parents[2]


def sim(*args, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "runbook", "sim", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        stdin=subprocess.DEVNULL,
    )


def endpoints(inventory: Path) -> dict[str, tuple[str, int]]:
    doc = yaml.safe_load(inventory.read_text())["all"]["children"]
    return {
        h: (v["ansible_host"], v["ansible_port"])
        for g in ("compute", "sm")
        for h, v in doc[g]["hosts"].items()
    }


@pytest.fixture
def default_taken():
    """Something listens on the default address and port (or already did)."""
    first = f"{DEFAULT_BASE[:-1]}1"
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((first, DEFAULT_PORT))
        sock.listen(1)
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
    yield first
    sock.close()


def test_default_taken_a_free_range_is_picked_and_said(tmp_path, default_taken):
    p = sim("--dir", str(tmp_path / "lab"), "--nodes", "2", "--lifetime", "0.5")
    assert p.returncode == 0, p.stderr
    assert f"{default_taken}.. port {DEFAULT_PORT} is in use (another lab?); using 127." in p.stderr
    eps = endpoints(tmp_path / "lab" / "inventory.yaml")
    assert len(eps) == 4 and not any(a.startswith("127.77.0.") for a, _ in eps.values())
    moved = re.search(r"runbook sim: 4 nodes on (\S+)\.\.(\S+) port (\d+)", p.stderr)
    assert moved and moved.group(1) == eps["gpu01"][0] and int(moved.group(3)) == eps["gpu01"][1]


def test_an_address_given_on_the_command_line_is_not_moved(tmp_path, default_taken):
    p = sim("--dir", str(tmp_path / "lab"), "--nodes", "2", "--lifetime", "0.5", "--port", str(DEFAULT_PORT))
    assert p.returncode == 2
    assert (
        f"addresses in use: {default_taken}.. port {DEFAULT_PORT} (choose others with --base-address"
        in p.stderr
    )
    assert "Traceback" not in p.stderr


def test_port_0_the_banner_tells_the_truth(tmp_path):
    p = sim(
        "--dir",
        str(tmp_path / "lab"),
        "--nodes",
        "3",
        "--lifetime",
        "0.5",
        "--port",
        "0",
        "--base-address",
        next_base(),
        "--scenario",
        str(scenario.EMPTY),
    )
    assert p.returncode == 0, p.stderr
    ports = sorted(port for _, port in endpoints(tmp_path / "lab" / "inventory.yaml").values())
    assert len(set(ports)) == 5 and 0 not in ports
    assert f"ports {ports[0]}-{ports[-1]} (one per node" in p.stderr, p.stderr


def test_describe():
    assert describe([("127.1.1.1", 2222), ("127.1.1.2", 2222)]) == "127.1.1.1..127.1.1.2 port 2222"
    assert (
        describe([("127.0.0.1", 4001), ("127.0.0.1", 4000)])
        == "127.0.0.1 ports 4000-4001 (one per node, see the ssh_config)"
    )


def test_single_address_mode_every_node_on_127_0_0_1_over_real_ssh(sim_process, tmp_path):
    lab = sim_process(nodes=3, port=0, extra=["--single-address"])
    eps = endpoints(lab.inventory)
    assert {a for a, _ in eps.values()} == {"127.0.0.1"}
    assert len({p for _, p in eps.values()}) == len(eps) == 5
    env = dict(os.environ, PYTHONPATH=str(REPO), RUNBOOK_OPERATOR="tester")
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "runbook",
            "run",
            "--step",
            "ssh-reachable",
            "--step",
            "hostname-matches",
            "--inventory",
            str(lab.inventory),
            "--steps",
            str(REPO / "steps"),
            "--state",
            str(tmp_path / "state"),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    import json

    doc = {s["id"]: s for s in json.loads(p.stdout)["steps"]}
    assert doc["ssh-reachable"]["counts"] == {"pass": 5}
    # each host answered as itself (the known_hosts told them apart by port)
    assert doc["hostname-matches"]["counts"] == {"pass": 5}


def test_demo_faults_are_placed_by_position(design):
    big = Cluster.build(design, 100)  # gpu001..gpu100
    applied = scenario.apply(big, scenario.DEFAULT, strict=True)
    assert big.nodes["gpu007"].faults == ["link_type_eth"] and big.nodes["gpu040"].faults == ["wrong_rail"]
    assert len(applied) == 8
    small = Cluster.build(design, 4)
    assert {e.node for e in scenario.apply(small, scenario.DEFAULT, strict=False)} == {"sm02"}
    with pytest.raises(InputError):  # a scenario the user wrote still names nodes that exist
        scenario.apply(Cluster.build(design, 4), scenario.DEFAULT, strict=True)


@pytest.mark.slow
def test_a_1000_node_lab_with_the_demo_scenario(tmp_path):
    p = sim(
        "--dir",
        str(tmp_path / "lab"),
        "--nodes",
        "1000",
        "--lifetime",
        "0.5",
        "--port",
        "0",
        "--base-address",
        next_base(),
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert "runbook sim: 1002 nodes on" in p.stderr
    assert "gpu0007: link_type_eth" in p.stderr and "gpu0033: unreachable" in p.stderr
