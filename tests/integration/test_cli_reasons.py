"""What the CLI tells a person on a real (simulated) lab, over SSH: why hosts
are unknown or blocked, folded by NodeSet, and what to run next; the apply
prompt in a terminal; the gist of apply scripts in a log; the demo's exit code."""

import os
import pty
import re
import select
import shutil
import subprocess
import sys
import time

import pytest

from runbook.sim.procs import SimProcess, random_base
from runbook.sim.scenario import DEFAULT

from .conftest import REPO, runbook_cli


@pytest.fixture(scope="module")
def small_lab(tmp_path_factory):
    """4 compute + 2 SM nodes; the demo scenario leaves sm02 without the storage partition."""
    lab = SimProcess(
        tmp_path_factory.mktemp("lab"),
        nodes=4,
        scenario=DEFAULT,
        base_address=random_base(),
        port=0,
        lifetime=600,
        reboot_seconds=0.5,
    )
    lab.start()
    yield lab
    lab.stop()


def test_blocked_says_which_step_to_run_first(small_lab, tmp_path):
    p = runbook_cli("run", "--step", "link-type-ib", state=tmp_path / "state", inventory=small_lab.inventory)
    assert "Traceback" not in p.stderr
    assert (
        "blocked: link-type-ib on gpu[01-04] — needs mst-started, which has not run: run it first "
        "(runbook run --step mst-started), or run the phase (runbook run --phase nic-mode)"
    ) in p.stderr, p.stderr
    # status says the same, from the store
    s = runbook_cli("status", state=tmp_path / "state", inventory=small_lab.inventory)
    assert "blocked: link-type-ib on gpu[01-04] — needs mst-started, which has not run" in s.stdout, s.stdout


def test_unknown_hosts_are_folded_with_the_reason_and_the_way_out(small_lab, tmp_path):
    # an inventory whose known_hosts knows none of the lab's keys, and an empty ~/.ssh
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    text = small_lab.inventory.read_text().replace(str(small_lab.known_hosts), str(empty))
    assert str(empty) in text
    inv = tmp_path / "inventory.yaml"
    inv.write_text(text)
    env = dict(os.environ, RUNBOOK_OPERATOR="tester", PYTHONPATH=str(REPO), HOME=str(tmp_path))
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "runbook",
            "run",
            "--step",
            "ssh-reachable",
            "--state",
            str(tmp_path / "state"),
            "--inventory",
            str(inv),
            "--steps",
            str(REPO / "steps"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 3, p.stderr
    assert (
        "unknown: gpu[01-04],sm[01-02] — host key: no known key for these hosts "
        "(pin them with --trust-new-hosts) (ssh-reachable)"
    ) in p.stderr, p.stderr


def _read_until(fd, needle: bytes, timeout: float) -> bytes:
    out = b""
    deadline = time.monotonic() + timeout
    while needle not in out and time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                out += os.read(fd, 65536)
            except OSError:
                break
    return out


def test_the_apply_prompt_shows_y_n_and_the_bar_leaves_it_alone(small_lab, tmp_path):
    state, inv = tmp_path / "state", small_lab.inventory
    runbook_cli("run", "--step", "partitions-conf", state=state, inventory=inv, check_rc=1)
    main, child = pty.openpty()
    env = dict(os.environ, RUNBOOK_OPERATOR="tester", PYTHONPATH=str(REPO), TERM="xterm", COLUMNS="120")
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "runbook",
            "run",
            "--step",
            "partitions-conf",
            "--action",
            "apply",
            "--state",
            str(state),
            "--inventory",
            str(inv),
            "--steps",
            str(REPO / "steps"),
        ],
        stdin=child,
        stdout=child,
        stderr=child,
        env=env,
        cwd=tmp_path,
        close_fds=True,
    )
    os.close(child)
    try:
        before = _read_until(main, b"[y/N] ", 60)
        assert b"apply partitions-conf on 1 host? [y/N] " in before, before[-2000:]
        assert b"printf" in before  # a person who confirms sees every line of the commands
        # while the question waits, nothing is drawn over it
        quiet = _read_until(main, b"\x00never", 1.5)
        assert quiet == b"", quiet
        os.write(main, b"n\n")
        rest = _read_until(main, b"\x00never", 15)
        assert proc.wait(30) in (0, 1, 3)
        assert b"Traceback" not in rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(main)
    # the refusal is recorded: nothing was applied
    status = runbook_cli("status", "--json", state=state, inventory=inv)
    assert '"failing": "sm02"' in status.stdout


# after the prompt test: this one fixes sm02 for good
def test_a_log_gets_the_gist_of_an_apply_script_the_plan_has_it_all(small_lab, tmp_path):
    state, inv = tmp_path / "state", small_lab.inventory
    runbook_cli("run", "--step", "partitions-conf", state=state, inventory=inv, check_rc=1)
    p = runbook_cli(
        "run", "--step", "partitions-conf", "--action", "apply", "--yes", state=state, inventory=inv
    )
    assert re.search(
        r"sm02: conf=/etc/opensm/partitions.conf  … \(\d+ lines; `runbook plan --step "
        r"partitions-conf` shows them all\)",
        p.stderr,
    ), p.stderr
    assert "printf" not in p.stderr and "=full" not in p.stderr  # not the whole PKey plan
    plan = subprocess.run(
        [
            sys.executable,
            "-m",
            "runbook",
            "plan",
            "--step",
            "partitions-conf",
            "--inventory",
            str(inv),
            "--steps",
            str(REPO / "steps"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    assert "printf" in plan.stdout, plan.stderr


@pytest.mark.slow
def test_headless_demo_exits_with_the_runs_verdict_from_any_directory(tmp_path):
    scenario = tmp_path / "faults.yaml"
    scenario.write_text("faults:\n  gpu02: [pcie_x8]\n")  # no apply can retrain a PCIe link
    work = tmp_path / "empty"
    work.mkdir()
    p = subprocess.run(
        [sys.executable, "-m", "runbook", "demo", "--headless", "--nodes", "3", "--scenario", str(scenario)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=work,
        stdin=subprocess.DEVNULL,
        env=dict(os.environ, PYTHONPATH=str(REPO), RUNBOOK_OPERATOR="t"),
    )
    assert p.returncode == 1, p.stderr[-3000:]
    assert "the run's verdict exit code is 1" in p.stderr
    assert (work / "state" / "demo" / "completion-log.json.sig").exists()
    shutil.rmtree(work / "state")
