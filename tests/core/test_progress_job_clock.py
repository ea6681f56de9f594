"""`runbook run`'s progress (runbook/cli/progress.py) shows a detached job's
elapsed and expected time: a live column on a terminal (runbook/cli/live_bars.py),
one line without one."""

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console

from runbook.cli.live_bars import JobClockColumn
from runbook.cli.progress import RunProgress
from runbook.run.events import HostStarted, StepFinished, StepStarted


def _feed(console, job_of):
    progress = RunProgress(console, job_of=job_of)
    with progress:
        progress([StepStarted("gpu-burn-in", "verify", ("gpu01", "gpu02"))])
        progress(
            [
                HostStarted("gpu-burn-in", "verify", "gpu01", "burn"),
                HostStarted("gpu-burn-in", "verify", "gpu02", "burn"),
            ]
        )
    return progress


def test_without_a_terminal_one_line_names_the_expected_time():
    buf = io.StringIO()
    started = time.time() - 5
    clocks = {"gpu01": (started, 600.0), "gpu02": (started + 1, 900.0)}
    progress = _feed(Console(file=buf, force_terminal=False), lambda s, h: clocks.get(h))
    assert buf.getvalue().splitlines() == [
        "gpu-burn-in              verify   detached job started, expected about 10m00s"
    ]
    assert progress.progress is None  # no live bars without a terminal


def test_without_a_terminal_a_step_started_again_says_its_job_again():
    """verify, apply, verify again in one `runbook run`: each start of the job is said."""
    buf = io.StringIO()
    progress = RunProgress(Console(file=buf, force_terminal=False), job_of=lambda s, h: (time.time(), None))
    for _ in range(2):
        progress(
            [
                StepStarted("gpu-burn-in", "verify", ("gpu01",)),
                HostStarted("gpu-burn-in", "verify", "gpu01", "b"),
            ]
        )
        progress([StepFinished("gpu-burn-in", "verify", "pass", {"pass": 1})])
    assert buf.getvalue().count("detached job started") == 2


def test_on_a_terminal_the_column_shows_the_steps_clock():
    started = time.time() - 5
    clocks = {"gpu01": (started, 600.0), "gpu02": (started + 1, 900.0)}
    console = Console(file=io.StringIO(), force_terminal=True, width=120, color_system=None)
    progress = _feed(console, lambda s, h: clocks.get(h))
    task = progress.progress.tasks[0]
    assert task.fields["clock"] == (started, 900.0)  # the step's first start, its longest expectation
    assert str(JobClockColumn().render(task)) == "detached job · 5s of about 15m00s"
    assert "detached job started" not in console.file.getvalue()  # the column says it, not a line


def test_a_step_that_is_not_detached_shows_no_clock():
    buf = io.StringIO()
    _feed(Console(file=buf, force_terminal=False), lambda s, h: None)
    assert buf.getvalue() == ""
    console = Console(file=io.StringIO(), force_terminal=True, width=120, color_system=None)
    progress = _feed(console, lambda s, h: None)
    assert progress.progress.tasks[0].fields["clock"] is None
    assert str(JobClockColumn().render(progress.progress.tasks[0])) == ""


def test_the_session_is_asked_only_about_steps_with_a_detached_action():
    from runbook.cli.cmd_run import _detached_job_of
    from runbook.definition.loader import load_runbook
    from runbook.shipped import steps_dir

    runbook = load_runbook(steps_dir())
    asked = []

    class Session:
        def detached_job(self, step_id, host):
            asked.append(step_id)
            return (1.0, 600.0)

    job_of = _detached_job_of(Session(), runbook)
    assert job_of("gpu-burn-in", "gpu01") == (1.0, 600.0)  # verify: detach: true
    assert job_of("ofed-version", "gpu01") is None and job_of("no-such-step", "gpu01") is None
    assert asked == ["gpu-burn-in"]


_PROBE = r"""
import io, json, sys
from rich.console import Console
from runbook.cli.progress import RunProgress
from runbook.run.events import StepFinished, StepStarted
console = Console(file=io.StringIO(), force_terminal=sys.argv[1] == "terminal")
with RunProgress(console) as rp:
    rp([StepStarted("a", "verify", ("n1",)), StepFinished("a", "verify", "pass", {"pass": 1})])
print(json.dumps("rich.progress" in sys.modules))
"""


def test_without_a_terminal_the_live_bars_are_not_even_imported():
    """A `runbook run` in CI or a pipe does not pay for rich.progress at start-up."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    loaded = {}
    for where in ("pipe", "terminal"):
        proc = subprocess.run(
            [sys.executable, "-c", _PROBE, where], env=env, capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 0, proc.stderr
        loaded[where] = json.loads(proc.stdout)
    assert loaded == {"pipe": False, "terminal": True}
