"""The TUI's activity line says which steps run side by side (a verify run of
several steps pipelines them: runbook/engine/scheduler.py); one step alone is
shown as before."""

from runbook.run.events import HostFinished, StepFinished, StepStarted
from runbook.tui.feed import Feed


def test_activity_names_every_step_running():
    feed = Feed()
    feed.add([StepStarted("a", "verify", ("n1", "n2"), "sha")])
    assert feed.activity() == "verify a 0/2"
    feed.add([StepStarted("b", "verify", ("n1", "n2"), "sha"), HostFinished("a", "verify", "n1", "pass", "")])
    assert feed.activity() == "verify 2 steps: a 1/2 · b 0/2"
    assert [p.step_id for p in feed.running_steps()] == ["a", "b"]
    feed.add(
        [HostFinished("a", "verify", "n2", "pass", ""), StepFinished("a", "verify", "pass", {"pass": 2})]
    )
    assert feed.activity() == "verify b 0/2"
    feed.add([StepFinished("b", "verify", "pass", {"pass": 2})])
    assert feed.activity() == "verify b 0/2"  # the last step shown till the run ends, as before
    feed.stop()
    assert feed.activity() == "" and feed.running_steps() == []
