"""At 80x24 (a laptop in tmux): the help scrolls, every dialog fits with its
buttons, and the host grid scrolls to every host (issue 17, TUI)."""

from textual.containers import VerticalScroll
from textual.widgets import Button

from runbook.tui.app import make_app
from runbook.tui.screens.ask import AskScreen
from runbook.tui.screens.confirm import ConfirmScreen
from runbook.tui.screens.export import ExportScreen
from runbook.tui.screens.help import HelpScreen
from runbook.tui.screens.reason import ReasonScreen

SIZE = (80, 24)


def inside_the_screen(widget) -> bool:
    r = widget.region
    return (
        r.width > 0 and r.height > 0 and r.x >= 0 and r.y >= 0 and r.right <= SIZE[0] and r.bottom <= SIZE[1]
    )


def assert_fits_with_buttons(screen) -> None:
    dialog = screen.query_one(".dialog")
    assert inside_the_screen(dialog), f"{type(screen).__name__}: {dialog.region} is not inside {SIZE}"
    for button in screen.query(Button):
        assert inside_the_screen(button), f"{type(screen).__name__}: button {button.id} at {button.region}"
        assert dialog.region.contains_region(button.region)


async def test_help_scrolls_to_its_last_line_at_80x24(fixed_session):
    app = make_app(fixed_session, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert_fits_with_buttons(app.screen)
        scroll = app.screen.query_one(VerticalScroll)
        assert inside_the_screen(scroll)
        assert scroll.max_scroll_y > 0  # more than fits: it must scroll, not be cut
        scroll.scroll_end(animate=False)
        await pilot.pause()
        assert scroll.scroll_y == scroll.max_scroll_y


async def test_every_dialog_fits_with_its_buttons_at_80x24(fixed_session):
    app = make_app(fixed_session, blink=False)
    many = [f"gpu{i:02d}" for i in range(1, 49)]
    commands = {
        h: f"mlxconfig -y -d mlx5_{i % 5} set LINK_TYPE_P1=1 LINK_TYPE_P2=1" for i, h in enumerate(many)
    }
    befores = {h: {"LINK_TYPE_P1": "ETH(2)", "LINK_TYPE_P2": f"ETH({i % 7})"} for i, h in enumerate(many)}
    dialogs = [
        ConfirmScreen(
            "rollback",
            "link-type-ib",
            "ConnectX ports in InfiniBand mode (LINK_TYPE=1)",
            many,
            commands,
            befores=befores,
            then="reboot",
        ),
        AskScreen(
            "Commands are running (verify link-type-ib 3/48).\nQuit anyway? Every finished result is "
            "saved; hosts still running are recorded as interrupted and re-run with f next time.",
            yes="Quit",
            no="Keep running",
        ),
        ReasonScreen("waive", "link-type-ib", "gpu[07,31]", blink=False),
        ReasonScreen("skip", "link-type-ib", blink=False),
        ExportScreen("completion-log-run-0001.json", blink=False),
    ]
    async with app.run_test(size=SIZE) as pilot:
        for dialog in dialogs:
            await app.push_screen(dialog)
            await pilot.pause()
            assert_fits_with_buttons(dialog)
            app.pop_screen()
            await pilot.pause()


async def test_the_host_grid_scrolls_to_every_host_at_80x24(fixed_session):
    app = make_app(fixed_session, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        app.main.go_to_step("ssh-reachable")
        grid = app.main.grid
        grid.focus()
        await pilot.pause()
        hosts = app.main.view.hosts_of("ssh-reachable")
        assert grid.total == len(hosts) == 50
        assert inside_the_screen(grid)
        seen = set()
        for _ in range(len(hosts)):
            seen.add(grid.host)
            row = grid._cursor // grid._cols
            # the cursor's row is inside the grid's visible window
            assert grid.scroll_offset.y <= row < grid.scroll_offset.y + grid.scrollable_content_region.height
            await pilot.press("right")
        assert seen == set(hosts)
        await pilot.press("end")
        await pilot.pause()
        assert grid.host == hosts[-1]
        last_row = (len(hosts) - 1) // grid._cols
        assert grid.scroll_offset.y <= last_row < grid.scroll_offset.y + grid.scrollable_content_region.height
