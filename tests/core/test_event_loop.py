"""runbook/event_loop.py: `runbook run` and the simulator on uvloop where it is
installed and the run is not a small one, on asyncio's own loop with
RUNBOOK_UVLOOP=0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from runbook import event_loop

REPO = Path(__file__).resolve().parents[2]
uvloop = pytest.importorskip("uvloop")  # a dependency (pyproject.toml)


def test_uvloop_unless_turned_off_or_the_run_is_small():
    assert event_loop.loop_factory({}) is uvloop.new_event_loop
    assert event_loop.loop_factory({}, commands=event_loop.MIN_COMMANDS) is uvloop.new_event_loop
    # one step on a few dozen hosts: uvloop's start costs more than it saves
    assert event_loop.loop_factory({}, commands=event_loop.MIN_COMMANDS - 1) is None
    assert event_loop.loop_factory({"RUNBOOK_UVLOOP": "1"}, commands=50) is uvloop.new_event_loop
    for off in ("0", "off", "No", "false "):
        assert event_loop.loop_factory({"RUNBOOK_UVLOOP": off}) is None


def _loop_of_a_run(**env) -> str:
    code = (
        "import asyncio\n"
        "from runbook import event_loop\n"
        "async def main():\n"
        "    await asyncio.to_thread(lambda: None)\n"  # a worker thread, as a run's store uses
        "    return type(asyncio.get_running_loop()).__module__\n"
        "print(event_loop.run(main()))\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO), **env},
    )
    return p.stdout.strip()


def test_run_returns_what_the_coroutine_returns_on_the_loop_chosen():
    assert _loop_of_a_run().startswith("uvloop")
    assert _loop_of_a_run(RUNBOOK_UVLOOP="0").startswith("asyncio")
