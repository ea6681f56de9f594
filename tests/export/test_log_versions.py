"""Versions in the completion log, from a real store with recorded definitions
(runbook/export/log_versions.py): a step changed and a step removed between two
sessions; the log keeps the versions that judged the results, lists the
change, signs, and verifies; edits of the version sections are named."""

import json
import re
import shutil
from pathlib import Path

import asyncssh
import pytest

from runbook.export import export_run, verify_log
from runbook.export.checks import check_document
from runbook.inventory.load import select_hosts
from runbook.run.events import HostFinished, HostStarted, RunFinished, StepStarted
from runbook.store.store import Store
from runbook.workspace.project import load_project

from .conftest import allowed_signers, keygen_verify

REPO = Path(__file__).resolve().parents[2]


def verify(store, project, step_id):
    """One verify of a step on its targets, every host passing (the journal
    events the engine writes, with the versions it writes)."""
    step = project.runbook.step(step_id)
    hosts = select_hosts(project.inventory, step.hosts)
    events = [
        StepStarted(step.id, "verify", tuple(hosts), step.sha256, inventory_sha256=project.inventory.sha256)
    ]
    for h in hosts:
        events += [
            HostStarted(step.id, "verify", h, step.verify.run),
            HostFinished(step.id, "verify", h, "pass", "", step.verify.run, 0, f"{h} ok\n"),
        ]
    store.append_many(events)


@pytest.fixture
def two_sessions(tmp_path):
    steps, state = tmp_path / "steps", tmp_path / "state"
    shutil.copytree(REPO / "steps", steps)
    first = load_project(steps, REPO / "inventory", check=False)
    store = Store.create(
        state,
        "run-1",
        site="seed-dc",
        operator="alice",
        tool_version="0.1.0",
        inventory_sha256=first.inventory.sha256,
        runbook_sha256=first.runbook.sha256,
    )
    store.record_definitions(first.runbook, first.inventory)
    verify(store, first, "ofed-version")
    verify(store, first, "cuda-version")
    store.close()
    software = steps / "40-software.yaml"
    text = software.read_text().replace("run: ofed_info -s", "run: ofed_info -s | head -1", 1)
    software.write_text(re.sub(r"\n  - id: cuda-version\n.*?(?=\n  - id: )", "", text, count=1, flags=re.S))
    second = load_project(steps, REPO / "inventory", check=False)
    assert "cuda-version" not in {s.id for s in second.runbook.steps}
    store = Store.open(state)
    assert store.record_definitions(second.runbook, second.inventory) is True
    verify(store, second, "ofed-version")
    store.append(RunFinished("pass"))
    store.close()
    return state, first, second


@pytest.fixture
def key(tmp_path):
    k = asyncssh.generate_private_key("ssh-ed25519", comment="alice@example.com")
    k.write_private_key(str(tmp_path / "key"))
    k.write_public_key(str(tmp_path / "key.pub"))
    (tmp_path / "key").chmod(0o600)
    return tmp_path / "key"


def test_changed_and_removed_steps_are_signed_as_used(two_sessions, key, tmp_path):
    state, first, second = two_sessions
    with Store.open(state, read_only=True) as store:
        snapshot = store.snapshot()  # no runbook, no inventory given: the run's own
    out = tmp_path / "log.json"
    export_run(snapshot, out, sign_key=str(key), identity="alice@example.com")
    log = json.loads(out.read_text())

    old_ofed, new_ofed = first.runbook.step("ofed-version").sha256, second.runbook.step("ofed-version").sha256
    cuda = first.runbook.step("cuda-version").sha256
    assert {s["id"]: s["sha256"] for s in log["steps"]}["ofed-version"] == new_ofed
    assert "cuda-version" not in {s["id"] for s in log["steps"]}
    assert {(v["id"], v["sha256"]) for v in log["step_versions"]} == {
        ("ofed-version", old_ofed),
        ("cuda-version", cuda),
    }
    judged = {(r["step_id"], r["step_sha256"]) for r in log["results"]}
    assert judged == {("ofed-version", new_ofed), ("cuda-version", cuda)}
    assert [(c["kind"], c["step_id"], c["from"], c["to"]) for c in log["definition_changes"]] == [
        ("step", "ofed-version", old_ofed, new_ofed)
    ]
    assert log["inventory_versions"] == []  # one inventory throughout

    report = verify_log(out)
    assert report.ok, report.problems
    signers = allowed_signers(tmp_path / "allowed", "alice@example.com", Path(f"{key}.pub"))
    assert keygen_verify(out, Path(f"{out}.sig"), signers, "alice@example.com").returncode == 0


def test_edits_of_the_version_sections_are_named(two_sessions, key, tmp_path):
    state, _first, _second = two_sessions
    with Store.open(state, read_only=True) as store:
        snapshot = store.snapshot()
    out = tmp_path / "log.json"
    export_run(snapshot, out, sign_key=str(key), identity="alice@example.com")
    log = json.loads(out.read_text())
    assert check_document(log).problems == []

    def problems(edit):
        doc = json.loads(out.read_text())
        edit(doc)
        return check_document(doc).problems

    def definition(doc):
        doc["step_versions"][0]["definition"]["verify"]["run"] = "true"

    def dropped_version(doc):
        doc["step_versions"] = [v for v in doc["step_versions"] if v["id"] != "cuda-version"]

    def inventory_of_result(doc):
        doc["results"][0]["inventory_sha256"] = "ab" * 32

    def change_moved(doc):
        doc["definition_changes"][0]["time"] += 60

    assert any("definition is not the one that was hashed" in p for p in problems(definition))
    found = problems(dropped_version)
    assert any("refers to a step that is not in steps" in p for p in found)
    assert any("in neither steps nor step_versions" in p for p in found)
    assert any("are not the versions the journal started it with" in p for p in problems(inventory_of_result))
    assert any(p.startswith("definition_changes:") for p in problems(change_moved))
