"""The step pane shows a detached job's elapsed and expected time while the
selected host runs it, ticking; nothing otherwise (runbook/tui/widgets/job_clock.py)."""

import time

from textual.app import App, ComposeResult

from runbook.tui.runview import StepText
from runbook.tui.widgets.job_clock import JobClock
from runbook.tui.widgets.step_detail import StepDetail


def _text(host):
    return StepText("gpu-burn-in", "Burn-in", "why", host, "gpu[01-02]", 2)


class DetailApp(App):
    def __init__(self):
        super().__init__()
        self.started = time.time() - 125

    def compose(self) -> ComposeResult:
        # gpu01 runs the job (started 125 s ago, 600 s expected); gpu02 does not
        def job_of(step_id, host):
            return (self.started, 600.0) if (step_id, host) == ("gpu-burn-in", "gpu01") else None

        yield StepDetail(_text("gpu02"), job_of=job_of)


async def test_clock_shows_for_the_running_host_only_and_ticks():
    app = DetailApp()
    async with app.run_test(size=(80, 20)) as pilot:
        detail = app.query_one(StepDetail)
        clock = app.query_one(JobClock)
        assert not clock.display
        detail.show(_text("gpu01"))
        await pilot.pause()
        assert clock.display
        first = str(clock.render())
        assert first.startswith("detached job · 2m0") and first.endswith("of about 10m00s"), first
        await pilot.pause(1.2)
        assert str(clock.render()) != first  # it ticks
        detail.show(_text("gpu02"))
        await pilot.pause()
        assert not clock.display
