"""The state directory stands on its own: `status` and `export` with only
--state, in an empty directory, with the steps and the inventory gone; a
step and the inventory changed between two sessions of one run are listed in
the export, each result names the versions that judged it, and the log
verifies in our verifier and in the real ssh-keygen."""

import json
import os
import shutil
import subprocess
import sys

import asyncssh

from runbook.export.checks import check_document
from runbook.sim.procs import SimProcess, random_base

from .conftest import REPO, runbook_cli

SSH_KEYGEN = shutil.which("ssh-keygen") or "/usr/bin/ssh-keygen"


def cli_in(cwd, *args, timeout=120):
    """The real CLI, run where nothing but what is passed is at hand."""
    env = dict(os.environ, RUNBOOK_OPERATOR="tester", PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "runbook", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


def keygen_verify(log, identity, allowed):
    with open(log, "rb") as data:
        return subprocess.run(
            [
                SSH_KEYGEN,
                "-Y",
                "verify",
                "-f",
                str(allowed),
                "-I",
                identity,
                "-n",
                "runbook",
                "-s",
                f"{log}.sig",
            ],
            stdin=data,
            capture_output=True,
            text=True,
            timeout=30,
        )


def test_export_and_status_from_the_state_alone_list_what_changed(tmp_path):
    steps, state = tmp_path / "steps", tmp_path / "state"
    shutil.copytree(REPO / "steps", steps)
    with SimProcess(tmp_path / "lab", nodes=3, base_address=random_base(), port=0, lifetime=300) as lab:
        inv = lab.inventory

        def run(*step_ids):
            picks = [a for s in step_ids for a in ("--step", s)]
            return runbook_cli("run", *picks, state=state, inventory=inv, steps=steps)

        assert run("ofed-version", "nvidia-driver-version").returncode == 0  # session 1
        software = steps / "40-software.yaml"
        text = software.read_text()
        text = text.replace("run: ofed_info -s", "run: ofed_info -s | head -1", 1)
        text = text.replace("run: nvidia-smi\n", "run: nvidia-smi -L >/dev/null; nvidia-smi\n", 1)
        software.write_text(text)
        inv.write_text(inv.read_text() + "\n# edited between sessions\n")
        assert run("ofed-version").returncode == 0  # session 2: the driver step is not run again

    shutil.rmtree(steps)  # nothing left to read but the state
    shutil.rmtree(tmp_path / "lab")
    empty = tmp_path / "elsewhere"
    empty.mkdir()

    status = cli_in(empty, "status", "--json", "--state", str(state))
    assert status.returncode == 3, status.stderr  # nothing failed; most steps never ran
    by_id = {s["id"]: s for s in json.loads(status.stdout)["steps"]}
    assert by_id["ofed-version"]["status"] == "pass" and len(by_id["ofed-version"]["hosts"]) == 5
    assert by_id["nvidia-driver-version"]["status"] == "pass"
    assert by_id["link-type-ib"]["status"] == "pending"  # every step of the run's runbook is known

    key = asyncssh.generate_private_key("ssh-ed25519", comment="tester@site")
    key.write_private_key(str(tmp_path / "key"))
    (tmp_path / "key").chmod(0o600)
    out = empty / "log.json"
    export = cli_in(
        empty,
        "export",
        "--state",
        str(state),
        "--sign-key",
        str(tmp_path / "key"),
        "-o",
        str(out),
        "--identity",
        "tester@site",
    )
    assert export.returncode == 0, export.stderr

    log = json.loads(out.read_text())
    step = {s["id"]: s for s in log["steps"]}
    ofed_new, driver_new = step["ofed-version"]["sha256"], step["nvidia-driver-version"]["sha256"]
    assert "head -1" in step["ofed-version"]["definition"]["verify"]["run"]  # the run's latest
    older = {v["id"]: v for v in log["step_versions"]}
    assert set(older) == {"ofed-version", "nvidia-driver-version"}
    assert older["ofed-version"]["definition"]["verify"]["run"] == "ofed_info -s"
    assert older["nvidia-driver-version"]["definition"]["verify"]["run"] == "nvidia-smi"

    # each result names the versions that judged it
    first_inv = log["run"]["inventory_sha256"]
    second_inv = log["inventory"]["sha256"]
    assert first_inv != second_inv
    assert [i["sha256"] for i in log["inventory_versions"]] == [first_inv]
    results = {(r["step_id"], r["host"]): r for r in log["results"]}
    ofed = [r for (s, _h), r in results.items() if s == "ofed-version"]
    driver = [r for (s, _h), r in results.items() if s == "nvidia-driver-version"]
    assert len(ofed) == 5 and len(driver) == 3
    assert {(r["step_sha256"], r["inventory_sha256"]) for r in ofed} == {(ofed_new, second_inv)}
    assert {(r["step_sha256"], r["inventory_sha256"]) for r in driver} == {
        (older["nvidia-driver-version"]["sha256"], first_inv)
    }
    assert older["nvidia-driver-version"]["sha256"] != driver_new

    # the changes: what changed, when (the first use of the new version)
    changes = [(c["kind"], c["step_id"], c["from"], c["to"]) for c in log["definition_changes"]]
    assert changes == [
        ("step", "ofed-version", older["ofed-version"]["sha256"], ofed_new),
        ("inventory", "ofed-version", first_inv, second_inv),
    ]
    assert all(
        isinstance(c["time"], float) and c["time"] > log["run"]["started"] for c in log["definition_changes"]
    )

    report = (empty / "log.md").read_text()
    section = report[report.index("## Definitions changed during the run") :]
    assert (
        f"| step definition | ofed-version | {older['ofed-version']['sha256'][:12]} | {ofed_new[:12]} |"
        in section
    ), section
    assert (
        "| inventory |" in section
        and "Definitions changed during the run" in (empty / "log.html").read_text()
    )

    # without a trusted signer an intact log is not OK (exit 5, docs/security.md)
    assert cli_in(empty, "verify-log", str(out)).returncode == 5
    (empty / "allowed").write_text(log["signer"]["allowed_signers"] + "\n")  # the test's own key
    ours = cli_in(empty, "verify-log", str(out), "--allowed-signers", str(empty / "allowed"))
    assert ours.returncode == 0, ours.stdout + ours.stderr
    theirs = keygen_verify(out, "tester@site", empty / "allowed")
    assert theirs.returncode == 0, theirs.stderr

    # the new sections are checked, not just carried: an edit is named
    edited = json.loads(out.read_text())
    edited["results"][0]["step_sha256"] = "0" * 64
    assert any(
        "step_sha256/inventory_sha256 are not the versions" in p for p in check_document(edited).problems
    )
    edited = json.loads(out.read_text())
    edited["definition_changes"] = edited["definition_changes"][1:]
    assert any(p.startswith("definition_changes:") for p in check_document(edited).problems)
    edited = json.loads(out.read_text())
    edited["step_versions"] = [v for v in edited["step_versions"] if v["id"] != "nvidia-driver-version"]
    assert any("in neither steps nor step_versions" in p for p in check_document(edited).problems)


def test_explicit_files_that_differ_are_named_and_not_signed(tmp_path):
    """--steps/--inventory are still accepted; the log holds what the run used."""
    steps, state = tmp_path / "steps", tmp_path / "state"
    shutil.copytree(REPO / "steps", steps)
    with SimProcess(tmp_path / "lab", nodes=2, base_address=random_base(), port=0, lifetime=300) as lab:
        inv = lab.inventory
        assert (
            runbook_cli("run", "--step", "ofed-version", state=state, inventory=inv, steps=steps).returncode
            == 0
        )
        used = (steps / "40-software.yaml").read_text()
        (steps / "40-software.yaml").write_text(used.replace("run: ofed_info -s", "run: ofed_info", 1))
        key = asyncssh.generate_private_key("ssh-ed25519", comment="t@site")
        key.write_private_key(str(tmp_path / "key"))
        (tmp_path / "key").chmod(0o600)
        out = tmp_path / "log.json"
        export = runbook_cli(
            "export",
            "--sign-key",
            str(tmp_path / "key"),
            "-o",
            str(out),
            state=state,
            inventory=inv,
            steps=steps,
        )
        assert export.returncode == 0, export.stderr
        assert "not the steps run" in export.stderr and "using the run's own" in export.stderr
        log = json.loads(out.read_text())
        ofed = next(s for s in log["steps"] if s["id"] == "ofed-version")
        assert ofed["definition"]["verify"]["run"] == "ofed_info -s"
        status = runbook_cli("status", state=state, inventory=inv, steps=steps)
        assert status.returncode == 3 and "not the steps run" in status.stderr  # most steps never ran
