"""`runbook demo` quit and restarted three times, its lab too, then the log
exported with the TUI's `e`: the lab comes back on the same addresses (one
inventory version for the whole run), the export works, and the log verifies
with our verifier and with the real ssh-keygen; `runbook export` with only
--state works after the restarts as well.

The demo's own pieces are used (cli/demo.py: its directory layout, its lab on
the addresses it keeps, its signing key, its export dialog defaults); the
TUI is opened on them as `runbook tui` does (tui/launch.py), and driven with
Pilot."""

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from runbook.cli.demo import demo_paths, ensure_demo_key, start_demo_lab
from runbook.export import verify_log
from runbook.store.store import Store
from runbook.tui.app import make_app
from runbook.tui.screens.export import ExportScreen
from runbook.workspace.project import load_project
from runbook.workspace.session import Session

from .events_fixture import DATA
from .helpers import run_to_end, wait_until

REPO = Path(__file__).resolve().parents[2]
SSH_KEYGEN = shutil.which("ssh-keygen") or "/usr/bin/ssh-keygen"
# one step verified per session: the run grows across the restarts
SESSIONS = ("ssh-reachable", "hostname-matches", "clock-sync", "os-kernel-consistent")


async def demo_session(args, step_id: str, export: bool) -> bytes:
    """One `runbook demo`: start the lab, open the TUI on it, verify a step,
    export with `e` if asked, quit with `q`, stop the lab. The lab's inventory."""
    base, _lab_dir, state = demo_paths(args)
    log_path = base / "completion-log.json"
    sim = start_demo_lab(args)  # a new lab process each time
    try:
        project = load_project(REPO / "steps", sim.inventory)
        session = Session.open(
            project.runbook, project.inventory, state, operator="tester", stream_output=True
        )
        app = make_app(
            session, blink=False, export_output=str(log_path), export_key=str(ensure_demo_key(base))
        )
        try:
            async with app.run_test(size=(160, 48)) as pilot:
                app.main.go_to_step(step_id)
                await pilot.press("v")
                await run_to_end(app, pilot)
                if export:
                    await pilot.press("e")
                    await wait_until(
                        pilot, lambda: isinstance(app.screen, ExportScreen), what="the export dialog"
                    )
                    await pilot.press("enter")
                    await wait_until(
                        pilot, lambda: Path(f"{log_path}.sig").exists(), timeout=60, what="the signed log"
                    )
                    await run_to_end(app, pilot)
                await pilot.press("q")
                await wait_until(pilot, lambda: not app.is_running, what="the app to quit")
        finally:
            await session.close()
        return sim.inventory.read_bytes()
    finally:
        sim.stop()


async def test_demo_restarted_three_times_exports_a_log_that_verifies(tmp_path, monkeypatch):
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)  # sign with the demo's key file
    args = argparse.Namespace(
        dir=str(tmp_path / "demo"), nodes=8, scenario=str(DATA / "scenario.yaml"), headless=False
    )
    base, _lab_dir, state = demo_paths(args)
    log_path = base / "completion-log.json"
    inventories = [
        await demo_session(args, step_id, export=n == len(SESSIONS) - 1) for n, step_id in enumerate(SESSIONS)
    ]  # the last after three restarts

    # the lab came back on the same addresses: one inventory, one version of it
    assert all(inv == inventories[0] for inv in inventories)
    with Store.open(state, read_only=True) as store:
        journal = [e["event"] for e in store.journal()]
        run_dir = store.directory  # (state/ also holds its caches: definitions-cache/, load-cache/)
    named = {e["inventory_sha256"] for e in journal if e["type"] in ("RunStarted", "StepStarted")}
    assert len(named) == 1
    assert sum(e["type"] == "RunStarted" for e in journal) == 1  # one run across the restarts
    assert len((run_dir / "definitions" / "versions.jsonl").read_text().splitlines()) == 1

    log = json.loads(log_path.read_text())
    assert {r["step_id"] for r in log["results"]} == set(SESSIONS)
    assert log["definition_changes"] == [] and log["step_versions"] == [] and log["inventory_versions"] == []
    report = verify_log(log_path)
    assert report.ok, report.problems
    signer = log["signer"]
    (tmp_path / "allowed_signers").write_text(signer["allowed_signers"] + "\n")
    with open(log_path, "rb") as data:
        keygen = subprocess.run(
            [
                SSH_KEYGEN,
                "-Y",
                "verify",
                "-f",
                str(tmp_path / "allowed_signers"),
                "-I",
                signer["identity"],
                "-n",
                "runbook",
                "-s",
                f"{log_path}.sig",
            ],
            stdin=data,
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert keygen.returncode == 0, keygen.stderr
    assert "Good" in keygen.stdout + keygen.stderr

    # and the CLI, elsewhere, with only --state
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "runbook",
            "export",
            "--state",
            str(state),
            "--sign-key",
            str(ensure_demo_key(base)),
            "-o",
            str(elsewhere / "log.json"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=elsewhere,
        stdin=subprocess.DEVNULL,
    )
    assert cli.returncode == 0, cli.stderr
    assert verify_log(elsewhere / "log.json").ok
