"""The command-line contract: exit codes, FILE:LINE messages without
tracebacks, stdout for data."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures_path import configured

REPO = Path(__file__).resolve().parents[2]
FIXTURES = configured()


def cli(*args, cwd=REPO, input=None, env=None):
    return subprocess.run(
        [sys.executable, "-m", "runbook", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        input=input,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=str(REPO), **(env or {})),
    )


def test_lint_shipped_files():
    p = cli("lint")
    assert p.returncode == 0, p.stderr
    assert "59 steps in 14 phases" in p.stderr


def test_lint_broken_files_every_problem_no_traceback(tmp_path):
    steps = tmp_path / "steps"
    steps.mkdir()
    (steps / "10-a.yaml").write_text(
        "phase: a\ntitle: A\nsteps:\n  - id: x\n    title: X\n    why: w\n"
        "    hosts: nosuchgroup\n    verify:\n      run: echo {{ undefined_var }}\n"
    )
    (steps / "20-b.yaml").write_text("phase: b\nsteps: [\n")
    p = cli("lint", "--steps", str(steps), "--inventory", str(REPO / "inventory"))
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert f"{steps / '20-b.yaml'}:" in p.stderr and "YAML" in p.stderr
    # the inventory-dependent problem is found too (all problems at once)
    inv = tmp_path / "inv.yaml"
    inv.write_text("all:\n  hosts:\n    n1:\n")
    (steps / "20-b.yaml").unlink()
    p = cli("lint", "--steps", str(steps), "--inventory", str(inv))
    assert p.returncode == 2, p.stderr
    assert f"{steps / '10-a.yaml'}:4: step x: hosts 'nosuchgroup'" in p.stderr


def test_lint_undefined_template_variable(tmp_path):
    steps = tmp_path / "steps"
    steps.mkdir()
    (steps / "10-a.yaml").write_text(
        "phase: a\ntitle: A\nsteps:\n  - id: x\n    title: X\n    why: w\n"
        "    hosts: all\n    verify:\n      run: echo {{ undefined_var }}\n"
    )
    inv = tmp_path / "inv.yaml"
    inv.write_text("all:\n  hosts:\n    n1:\n")
    p = cli("lint", "--steps", str(steps), "--inventory", str(inv))
    assert p.returncode == 2
    assert (
        "10-a.yaml:9: step x: verify uses {{ undefined_var }}, not defined for any targeted host" in p.stderr
    )


def test_plan_json_has_templated_commands_per_host():
    p = cli("plan", "--format", "json", "--step", "ofed-version", "--hosts", "gpu[01-03]")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    step = doc["phases"][0]["steps"][0]
    assert step["id"] == "ofed-version" and step["hosts"] == "gpu[01-03]"
    assert step["verify"]["commands"][0]["hosts"] == "gpu[01-03]"
    assert "ofed_info -s" in step["verify"]["commands"][0]["command"]


def test_plan_markdown_reads_as_an_acceptance_plan():
    p = cli("plan", "--format", "md")
    assert p.returncode == 0
    assert p.stdout.startswith("# Acceptance plan — seed-dc")
    assert "### " in p.stdout and "*Why:*" in p.stdout and "If it fails:" in p.stdout


def test_parse_json_on_a_real_output():
    f = next((FIXTURES / "ibstat").glob("*.txt"))
    p = cli("parse", "ibstat", str(f), "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["cas"]


def test_parse_unreadable_output_is_a_clear_error():
    p = cli("parse", "mlxconfig", "-", input="this is not mlxconfig output\n")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.startswith("<stdin>: not readable as mlxconfig output:")
    p = cli("parse", "no-such-parser", "-", input="")
    assert p.returncode == 2 and "unknown parser" in p.stderr


@pytest.mark.skipif(not shutil.which("ansible-inventory"), reason="ansible-core not installed")
def test_inventory_equals_ansible_inventory():
    inv = str(REPO / "inventory" / "seed-cluster.yaml")
    ours = cli("inventory", "--inventory", inv, "--list")
    theirs = subprocess.run(["ansible-inventory", "-i", inv, "--list"], capture_output=True, text=True)
    assert json.loads(ours.stdout) == json.loads(theirs.stdout)


def test_second_owner_gets_exit_4_naming_the_holder(tmp_path):

    (tmp_path / "state").mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time; sys.path.insert(0, sys.argv[1]);"
                "from runbook.store.lock import StateLock; l = StateLock(sys.argv[2]); l.acquire();"
                "print('held', flush=True); time.sleep(30)"
            ),
            str(REPO),
            str(tmp_path / "state"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        p = cli("note", "ssh-reachable", "--reason", "x", "--state", str(tmp_path / "state"))
        assert p.returncode == 4, p.stderr
        assert str(holder.pid) in p.stderr
    finally:
        holder.kill()
        holder.wait()
