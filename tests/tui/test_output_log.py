"""Output is buffered per host and flushed on a timer; one host shown at a time."""

from textual.app import App, ComposeResult

from runbook.tui.widgets.output_log import OutputLog


class LogApp(App):
    def compose(self) -> ComposeResult:
        yield OutputLog(max_lines=50, keep_keys=3, flush_every=0.02)


async def test_only_the_shown_host_reaches_the_log_and_only_on_flush():
    app = LogApp()
    async with app.run_test() as pilot:
        log = app.query_one(OutputLog)
        log.show_key(("s", "gpu01"))
        log.add_lines(("s", "gpu01"), ["one", "two"])
        log.add_lines(("s", "gpu02"), ["other host"])
        assert log.line_count == 0  # buffered, not yet written
        await pilot.pause(0.1)
        assert list(log.lines) == ["one", "two"]
        log.show_key(("s", "gpu02"))
        assert list(log.lines) == ["other host"]
        log.replace(("s", "gpu02"), ["$ cmd", "full output"])
        assert list(log.lines) == ["$ cmd", "full output"]


async def test_buffers_are_bounded_and_fall_back_to_the_store():
    app = LogApp()
    async with app.run_test():
        log = app.query_one(OutputLog)
        for i in range(100):
            log.add_lines(("s", "gpu01"), [f"line {i}"])
        log.show_key(("s", "gpu01"))
        assert log.line_count == 50 and log.lines[-1] == "line 99"
        for h in ("gpu02", "gpu03", "gpu04"):
            log.add_lines(("s", h), ["x"])
        assert not log.has(("s", "gpu01"))  # evicted: the oldest buffer goes first
        log.show_key(("s", "gpu01"), fallback=["from the store"])
        assert list(log.lines) == ["from the store"]
