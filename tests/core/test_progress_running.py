"""The live progress of `runbook run` names the steps running side by side
(a verify run of several steps pipelines them: runbook/engine/scheduler.py)."""

import io

from rich.console import Console

from runbook.cli.progress import RunProgress
from runbook.run.events import HostFinished, StepFinished, StepStarted


def shown(rp: RunProgress, console: Console) -> str:
    console.file.truncate(0)
    console.file.seek(0)
    rp.progress.refresh()
    return console.file.getvalue()


def test_a_line_names_the_steps_running_while_there_are_several():
    console = Console(file=io.StringIO(), force_terminal=True, width=100, color_system=None)
    with RunProgress(console) as rp:
        rp([StepStarted("a", "verify", ("n1", "n2"), "sha")])
        assert "running" not in shown(rp, console)
        rp([StepStarted("b", "verify", ("n1", "n2"), "sha"), HostFinished("a", "verify", "n1", "pass", "")])
        out = shown(rp, console)
        assert "running 2 steps: a, b" in out and "1/2" in out
        rp([HostFinished("a", "verify", "n2", "pass", ""), StepFinished("a", "verify", "pass", {"pass": 2})])
        assert "running 2 steps" not in shown(rp, console)
