"""`runbook run` does not import what it does not use: the TUI (textual), export and
signing, the simulator, the other commands' modules (bench/cold_start.py measures why).
Checked in a fresh interpreter through sys.modules, after a real run's argument parsing
and project loading on the shipped steps (it stops at a usage error before any SSH)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

_PROBE = r"""
import json, sys
from runbook.cli.main import main
rc = main(sys.argv[1:])
print(json.dumps({"rc": rc, "modules": sorted(sys.modules)}))
"""

FORBIDDEN = ("textual", "runbook.tui", "runbook.export", "runbook.sim", "runbook.cli.cmd_signed_log",
             "runbook.cli.cmd_bundle", "runbook.cli.cmd_export", "runbook.cli.demo")  # fmt: skip
# imported only once the first connections are under way (workspace/connecting.py):
# none of them is needed to load the project and pick the first hosts
AFTER_CONNECTING = ("runbook.workspace.session", "runbook.store", "runbook.engine", "rich")


def test_run_path_imports_no_tui_export_or_sim(tmp_path):
    inventory = REPO / "inventory"  # the shipped example site: lint-clean with the shipped steps
    env = dict(os.environ, PYTHONPATH=str(REPO))
    # no --step/--all: `run` loads the project and stops with its usage error (exit 2)
    args = [
        "run",
        "--steps",
        str(REPO / "steps"),
        "--inventory",
        str(inventory),
        "--state",
        str(tmp_path / "s"),
    ]
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], env=env, capture_output=True, text=True, timeout=120
    )
    doc = json.loads(proc.stdout.strip().splitlines()[-1])
    assert doc["rc"] == 2, proc.stderr
    assert "say what to run" in proc.stderr
    assert "runbook.workspace.project" in doc["modules"]  # the probe did load the project
    loaded = [m for m in doc["modules"] if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]
    assert loaded == []
    early = [m for m in doc["modules"] if any(m == f or m.startswith(f + ".") for f in AFTER_CONNECTING)]
    assert early == []


def test_a_run_whose_files_are_all_in_the_load_cache_does_not_import_pyyaml(tmp_path):
    """The parser (runbook/yaml_parse.py, PyYAML) is imported only on a load-cache miss:
    the second load of the same files from the same state directory parses nothing."""
    state = tmp_path / "s"
    state.mkdir()  # (a state directory that exists: the caches are written into it)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    args = ["run", "--steps", str(REPO / "steps"), "--inventory", str(REPO / "inventory")]
    args += ["--state", str(state)]
    modules = []
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, "-c", _PROBE, *args], env=env, capture_output=True, text=True, timeout=120
        )
        doc = json.loads(proc.stdout.strip().splitlines()[-1])
        assert doc["rc"] == 2 and "say what to run" in proc.stderr, proc.stderr
        modules.append(doc["modules"])
    assert "yaml" in modules[0] and "runbook.yaml_parse" in modules[0]  # parsed, then cached
    assert [m for m in modules[1] if m == "yaml" or m.startswith(("yaml.", "runbook.yaml_parse"))] == []


_DATACLASSES = r"""
import dataclasses, importlib, json, sys
for m in sys.argv[1:]:
    importlib.import_module(m)
bare = []
for name, mod in sorted(sys.modules.items()):
    if not name.startswith("runbook."):
        continue
    for obj in list(vars(mod).values()):
        if isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__ == name:
            # without a docstring, @dataclass writes one from inspect.signature(cls)
            if (obj.__doc__ or "").startswith(obj.__name__ + "("):
                bare.append(f"{name}.{obj.__name__}")
print(json.dumps(sorted(set(bare))))
"""

# what a `runbook run` imports to verify a step (cli/cmd_run.py, workspace/connecting.py)
RUN_PATH = (
    "runbook.cli.cmd_run", "runbook.workspace.project", "runbook.workspace.connecting",
    "runbook.workspace.session", "runbook.engine.runner", "runbook.store.store",
    "runbook.transport.transport", "runbook.cli.progress", "runbook.run.summary",
    "runbook.cli.summary_json",
)  # fmt: skip


def test_every_dataclass_a_run_imports_has_a_docstring():
    """@dataclass gives a class without a docstring one made with inspect.signature, at
    every start of `runbook run` (bench/README.md, "After session 16"); a docstring costs
    nothing, and says more."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [sys.executable, "-c", _DATACLASSES, *RUN_PATH], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


_CLUSTERSHELL = r"""
import importlib, json, sys
for m in sys.argv[1:]:
    importlib.import_module(m)
before = "ClusterShell.NodeSet" in sys.modules
from runbook.inventory.hostsel import fold
folded = fold(["gpu02", "gpu01", "gpu03", "sm01"])
print(json.dumps({"before": before, "folded": folded, "after": "ClusterShell.NodeSet" in sys.modules}))
"""


def test_a_run_imports_clustershell_only_when_it_folds_or_selects_hosts():
    """ClusterShell (with the logging and configparser it brings) is imported at its
    first use: a run that names no host pattern and has no failing host to fold
    never needs it (inventory/hostsel.py)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [sys.executable, "-c", _CLUSTERSHELL, *RUN_PATH], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc == {"before": False, "folded": "gpu[01-03],sm01", "after": True}
