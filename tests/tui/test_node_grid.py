"""The host grid on its own: cells, partial repaints, filters, keys, mouse."""

from textual.app import App, ComposeResult

from runbook.tui.widgets.node_grid import NodeGrid

HOSTS = [f"gpu{i:02d}" for i in range(1, 49)]


class GridApp(App):
    def __init__(self, statuses):
        super().__init__()
        self.statuses = statuses
        self.highlighted: list[str | None] = []

    def compose(self) -> ComposeResult:
        yield NodeGrid(HOSTS, self.statuses)

    def on_mount(self) -> None:
        self.watch(
            self.query_one(NodeGrid), "cursor_host", lambda host: self.highlighted.append(host), init=False
        )


def line_text(grid: NodeGrid, y: int) -> str:
    return "".join(seg.text for seg in grid.render_line(y))


async def test_cells_show_glyph_and_name_and_only_changed_rows_repaint():
    app = GridApp({h: "pass" for h in HOSTS})
    async with app.run_test(size=(60, 20)) as pilot:
        grid = app.query_one(NodeGrid)
        cols = grid._cols
        assert cols == 60 // len("✔ gpu01 ")  # cells of glyph, space, name, gap across the width
        assert line_text(grid, 0).startswith("✔ gpu01 ✔ gpu02 ")
        repainted: list[int] = []
        original = grid.refresh_line
        grid.refresh_line = lambda y: (repainted.append(y), original(y))
        changed = grid.update_statuses({"gpu01": "pass", "gpu07": "fail", HOSTS[-1]: "unknown"})
        assert changed == 2  # gpu01 did not change
        assert sorted(repainted) == sorted({HOSTS.index("gpu07") // cols, (len(HOSTS) - 1) // cols})
        await pilot.pause()
        row = HOSTS.index("gpu07") // cols
        assert "✖ gpu07" in line_text(grid, row)


async def test_filter_keeps_failing_hosts_and_the_cursor_follows():
    statuses = {h: "pass" for h in HOSTS} | {"gpu07": "fail", "gpu31": "fail", "gpu12": "unknown"}
    app = GridApp(statuses)
    async with app.run_test(size=(60, 20)) as pilot:
        grid = app.query_one(NodeGrid)
        grid.set_filter("failing")
        assert grid.visible == ["gpu07", "gpu31"]
        grid.set_filter("unknown")
        assert grid.visible == ["gpu12"]
        grid.update_statuses({"gpu12": "pass", "gpu40": "interrupted"})
        assert grid.visible == ["gpu40"] and grid.host == "gpu40"
        grid.set_filter("all")
        assert len(grid.visible) == 48 and grid.host == "gpu40"  # the cursor stayed on its host
        assert app.highlighted == ["gpu07", "gpu12", "gpu40"]  # every move of the cursor was told
        await pilot.pause()


async def test_keys_and_mouse_move_the_cursor():
    app = GridApp({h: "pending" for h in HOSTS})
    async with app.run_test(size=(60, 20)) as pilot:
        grid = app.query_one(NodeGrid)
        grid.focus()
        await pilot.press("right", "right", "down")
        await pilot.pause()
        assert grid.host == HOSTS[2 + grid._cols]
        assert app.highlighted[-1] == grid.host
        await pilot.press("end")
        assert grid.host == HOSTS[-1]
        await pilot.click(NodeGrid, offset=(1 + grid._cell + 1, 0))  # second cell of the first row
        await pilot.pause()
        assert grid.host == "gpu02"
