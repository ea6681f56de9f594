"""While the selected host runs a detached command (a burn-in, a DCGM diag):
its elapsed and expected time, ticking each second (docs/long-running-steps.md).
Hidden otherwise."""

from __future__ import annotations

import time

from textual.widgets import Static

from ...engine.detached import clock_text

Clock = tuple[float, "float | None"]  # (started, expected seconds), from Session.detached_job


class JobClock(Static):
    DEFAULT_CSS = """
    JobClock { height: auto; color: $accent; text-style: bold; }
    JobClock.-idle { display: none; }
    """

    def __init__(self, clock: Clock | None = None, **kw):
        super().__init__("", **kw)
        self.clock = clock
        self.set_class(clock is None, "-idle")

    def on_mount(self) -> None:
        self._timer = self.set_interval(1.0, self._tick, pause=self.clock is None)
        self._tick()

    def set_clock(self, clock: Clock | None) -> None:
        if clock == self.clock:
            return
        self.clock = clock
        self.set_class(clock is None, "-idle")
        timer = getattr(self, "_timer", None)
        if timer is not None:
            timer.pause() if clock is None else timer.resume()
        self._tick()

    def _tick(self) -> None:
        if self.clock is not None:
            started, expected = self.clock
            self.update(clock_text(time.time() - started, expected))
