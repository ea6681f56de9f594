"""`runbook run`'s progress (runbook/cli/progress.py) shows a detached job's
elapsed and expected time: a live column on a terminal, one line without one."""

import io
import time

from rich.console import Console

from runbook.cli.progress import JobClockColumn, RunProgress
from runbook.run.events import HostStarted, StepStarted


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
    task = progress.progress.tasks[0]
    assert task.fields["clock"] == (started, 900.0)  # the step's first start, its longest expectation
    assert str(JobClockColumn().render(task)) == "detached job · 5s of about 15m00s"


def test_a_step_that_is_not_detached_shows_no_clock():
    buf = io.StringIO()
    progress = _feed(Console(file=buf, force_terminal=False), lambda s, h: None)
    assert buf.getvalue() == "" and progress.progress.tasks[0].fields["clock"] is None
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
