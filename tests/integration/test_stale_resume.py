"""Resume semantics: passed hosts are not re-run; a changed step definition
or inventory makes the old results stale, says so, and re-verifies them."""

import json
import shutil

from runbook.sim.procs import SimProcess, random_base
from runbook.store.store import Store

from .conftest import REPO, runbook_cli


def started_hosts(state, step_id):
    """Hosts of each StepStarted(verify) of the step, in journal order."""
    with Store.open(state, read_only=True) as store:
        return [
            e["event"]["hosts"]
            for e in store.journal()
            if e["event"]["type"] == "StepStarted" and e["event"]["step_id"] == step_id
        ]


def test_passed_hosts_not_rerun_changed_definition_is_stale(tmp_path):
    steps = tmp_path / "steps"
    shutil.copytree(REPO / "steps", steps)
    with SimProcess(tmp_path / "lab", nodes=3, base_address=random_base(), port=0, lifetime=300) as lab:
        inv, state = lab.inventory, tmp_path / "state"

        def run(*extra):
            return runbook_cli(
                "run", "--step", "ofed-version", *extra, state=state, inventory=inv, steps=steps
            )

        assert run().returncode == 0
        assert run().returncode == 0
        assert [len(h) for h in started_hosts(state, "ofed-version")] == [5]  # second run: nothing to do
        text = (steps / "40-software.yaml").read_text()
        (steps / "40-software.yaml").write_text(
            text.replace("run: ofed_info -s", "run: ofed_info -s | head -1", 1)
        )
        again = run()
        assert again.returncode == 0
        assert "stale: the definition of step ofed-version changed" in again.stderr
        assert [len(h) for h in started_hosts(state, "ofed-version")] == [5, 5]
        # an inventory change makes them stale too
        inv_text = inv.read_text()
        inv.write_text(inv_text + "\n# edited\n")
        third = run()
        assert "the inventory changed" in third.stderr
        assert [len(h) for h in started_hosts(state, "ofed-version")] == [5, 5, 5]
        status = json.loads(runbook_cli("status", "--json", state=state, inventory=inv, steps=steps).stdout)
        assert next(s for s in status["steps"] if s["id"] == "ofed-version")["status"] == "pass"
