"""`python -m runbook.sim` as a process: ready marker, SIGTERM, lifetime, restart."""

import os
import shutil
import subprocess
import sys

import pytest


def ssh(sim, host, command):
    return subprocess.run(
        [shutil.which("ssh"), "-F", str(sim.ssh_config), host, command],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
    )


@pytest.mark.skipif(shutil.which("ssh") is None, reason="no OpenSSH client (ssh) on this machine")
def test_subprocess_serves_openssh_stops_on_sigterm_and_restarts_with_state(sim_process, tmp_path):
    sim = sim_process(nodes=3, scenario={"gpu02": ["link_type_eth"]}, directory=tmp_path / "lab")
    assert (sim.dir / "ready").read_text().strip() == str(sim.pid)
    assert ssh(sim, "gpu02", "cat /sys/class/infiniband/mlx5_0/ports/1/link_layer").stdout == "Ethernet\n"
    assert (
        ssh(
            sim,
            "gpu02",
            "mst start >/dev/null && mlxconfig -y -d mlx5_0 set LINK_TYPE_P1=1 >/dev/null && echo done",
        ).stdout
        == "done\n"
    )
    known = sim.known_hosts.read_text()
    assert sim.stop() == 0  # SIGTERM: a clean exit, marker removed
    assert not (sim.dir / "ready").exists()
    again = sim_process(nodes=3, scenario={"gpu02": ["link_type_eth"]}, directory=tmp_path / "lab")
    # same cached host keys (ports may differ), and the pending next-boot setting survived
    keys = lambda text: sorted(line.split(" ", 1)[1] for line in text.splitlines())
    assert keys(again.known_hosts.read_text()) == keys(known)
    out = ssh(again, "gpu02", "mst start >/dev/null && mlxconfig -d mlx5_0 q LINK_TYPE_P1 | tail -1")
    assert out.stdout.split() == ["LINK_TYPE_P1", "IB(1)"], out.stderr


def test_lifetime_ends_the_process(tmp_path):
    from runbook.sim.procs import SimProcess

    sim = SimProcess(tmp_path / "lab", nodes=1, lifetime=1.0).start()
    try:
        assert sim.proc.wait(timeout=15) == 0
        assert not (sim.dir / "ready").exists()
    finally:
        sim.stop()


def test_bad_scenario_exits_2_with_file_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("faults:\n  gpu01: [no_such_fault]\n")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "runbook.sim",
            "--dir",
            str(tmp_path / "d"),
            "--nodes",
            "2",
            "--scenario",
            str(bad),
            "--port",
            "0",
            "--lifetime",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    )
    assert r.returncode == 2 and f"{bad}:2: unknown fault 'no_such_fault'" in r.stderr
    assert "Traceback" not in r.stderr
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "runbook.sim",
            "--dir",
            str(tmp_path / "d"),
            "--nodes",
            "2",
            "--base-address",
            "10.0.0.0",
            "--port",
            "0",
            "--lifetime",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 2 and "not a loopback address" in r.stderr
