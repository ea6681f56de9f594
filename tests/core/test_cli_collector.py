"""`runbook run` holds the cyclic collector back while the work runs and puts
it back afterwards (cli/collector.py)."""

from __future__ import annotations

import gc

import pytest

from runbook.cli.collector import FULL_EVERY, YOUNG_EVERY, fewer_collections


def test_thresholds_and_frozen_objects_are_put_back():
    before = gc.get_threshold()
    frozen = gc.get_freeze_count()
    with fewer_collections():
        young, middle, full = gc.get_threshold()
        assert young >= YOUNG_EVERY and middle == before[1] and full >= FULL_EVERY
        assert gc.get_freeze_count() > frozen  # what existed is out of the collector's reach
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_put_back_when_the_run_fails():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("the run failed")
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_cycles_made_during_the_run_are_still_collected():
    with fewer_collections():
        a: list = []
        a.append(a)
        del a
        assert gc.collect() >= 1


_PROBE = r"""
import gc, json, sys
import runbook.workspace.project as project

real_load = project.load_project

def load_project(*a, **kw):  # what cmd_run calls first: before any SSH, asyncssh not imported
    print(json.dumps({"threshold": gc.get_threshold(), "asyncssh": "asyncssh" in sys.modules}))
    return real_load(*a, **kw)

project.load_project = load_project
from runbook.cli.main import main
sys.argv[0] = "runbook"  # the program's name in its messages, as `python -m runbook` has it
main()  # as the program runs it (argv None): exits the process itself
"""


def test_the_run_program_holds_the_collector_back_from_its_start(tmp_path):
    """The imports, the project's load and the first handshakes come before the work
    runs: `runbook run` as a program (cli/main.py) has the collector held back from
    its start, not only around the engine (bench/README.md, goal 2, branch cold3)."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    args = ["run", "--steps", str(repo / "steps"), "--inventory", str(repo / "inventory")]
    args += ["--state", str(tmp_path / "s")]  # no --step: it stops at its usage error
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        env=dict(os.environ, PYTHONPATH=str(repo)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "say what to run" in proc.stderr, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[0])
    young, _middle, full = seen["threshold"]
    assert young >= YOUNG_EVERY and full >= FULL_EVERY and seen["asyncssh"] is False
