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


class SmallLogApp(App):
    CSS = "OutputLog { overflow: auto auto; height: 8; }"

    def compose(self) -> ComposeResult:
        yield OutputLog(max_lines=500, flush_every=0.02)


async def test_new_lines_update_the_scrollbar_without_laying_out_the_screen():
    # A layout re-arranges and redraws every pane of the screen: lines streaming into
    # the output pane must not cost one per flush (bench/tui_latency.py times it).
    app = SmallLogApp()
    async with app.run_test(size=(60, 20)) as pilot:
        log = app.query_one(OutputLog)
        key = ("s", "gpu01")
        log.show_key(key)
        log.add_lines(key, [f"line {i}" for i in range(3)])
        await pilot.pause(0.1)
        assert not log.show_vertical_scrollbar  # 3 lines fit in 8 rows
        log.add_lines(key, [f"line {i}" for i in range(3, 30)])
        await pilot.pause(0.1)
        assert log.show_vertical_scrollbar  # the bar appears (this one is a layout)
        layouts = []
        real_refresh = log.refresh

        def refresh(*regions, **kw):
            if kw.get("layout"):
                layouts.append(kw)
            return real_refresh(*regions, **kw)

        log.refresh = refresh
        for n in range(5):  # five flushes of streamed lines, the bar already shown
            log.add_lines(key, [f"more {n}.{i}" for i in range(10)])
            await pilot.pause(0.05)
        assert layouts == []
        assert log.line_count == 80
        # the bar and the view still follow the lines: the thumb's size and the tail shown
        assert log.vertical_scrollbar.window_virtual_size == 80
        assert log.scroll_y == log.max_scroll_y > 0
        log.replace(key, ["$ cmd", "done"])  # the command ended: short output, the bar goes
        await pilot.pause(0.1)
        assert not log.show_vertical_scrollbar and list(log.lines) == ["$ cmd", "done"]


async def test_a_finished_output_is_made_only_when_its_host_is_shown():
    # 1,000 hosts finishing together: their outputs are split into lines only for
    # the host on show (the others when, if ever, they are shown)
    app = LogApp()
    async with app.run_test():
        log = app.query_one(OutputLog)
        made: list[str] = []

        def lines_of(host: str):
            def make() -> list[str]:
                made.append(host)
                return [f"$ cmd on {host}", "done"]

            return make

        log.show_key(("s", "gpu01"))
        log.replace(("s", "gpu02"), lines_of("gpu02"))
        assert made == [] and log.has(("s", "gpu02"))
        log.replace(("s", "gpu01"), lines_of("gpu01"))
        assert made == ["gpu01"] and list(log.lines) == ["$ cmd on gpu01", "done"]
        log.show_key(("s", "gpu02"))
        assert made == ["gpu01", "gpu02"] and list(log.lines) == ["$ cmd on gpu02", "done"]
        log.show_key(("s", "gpu02"))
        assert made == ["gpu01", "gpu02"]  # made once
