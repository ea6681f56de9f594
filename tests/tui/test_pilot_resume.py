"""Quitting while commands run, and coming back: nothing finished is lost,
what was in flight comes back as interrupted and the app says so."""

from runbook.tui.app import make_app
from runbook.tui.screens.ask import AskScreen
from runbook.tui.screens.confirm import ConfirmScreen

from .conftest import open_session, start_lab
from .helpers import run_to_end, verify_until_one_is_left, wait_until

HANGING = "gpu06"  # hangs (scenario-hang) or answers late (scenario-slow)


async def test_quitting_mid_run_and_reopening_loses_nothing(tmp_path):
    lab = await start_lab(tmp_path / "lab", "scenario-slow.yaml", slow_seconds=3.0)
    state_dir = tmp_path / "state"
    try:
        session = open_session(lab, state_dir)
        hosts = list(session.inventory.hosts)
        app = make_app(session, blink=False)
        try:
            async with app.run_test(size=(160, 48)) as pilot:
                app.main.go_to_step("ssh-reachable")
                await pilot.press("v")
                done = lambda: [h for h in hosts if session.state.status("ssh-reachable", h).value == "pass"]
                await wait_until(
                    pilot, lambda: len(done()) == len(hosts) - 1, what="every host but the hung one"
                )
                assert session.state.status("ssh-reachable", HANGING).value == "running"
                await pilot.press("q")
                await wait_until(pilot, lambda: isinstance(app.screen, AskScreen), what="the quit question")
                assert "Commands are running" in app.screen.question
                progress = app.screen.query_one("#quit-progress").render().plain
                assert (
                    progress
                    == f"now: verify ssh-reachable {len(hosts) - 1}/{len(hosts)} · still running on {HANGING}"
                )
                await pilot.press("y")
                await wait_until(pilot, lambda: app.return_code is not None, what="the app to exit")
        finally:
            await session.close()
        passed = done()

        reopened = open_session(lab, state_dir)
        try:
            assert [h for h in hosts if reopened.state.status("ssh-reachable", h).value == "pass"] == passed
            assert reopened.state.status("ssh-reachable", HANGING).value == "interrupted"
            app = make_app(reopened, blink=False)
            async with app.run_test(size=(160, 48)) as pilot:
                notice = app.main.query_one("#notice").render().plain
                assert f"1 host was interrupted in ssh-reachable ({HANGING})" in notice
                assert app.main.step_id == "ssh-reachable"
                assert app.main.grid.status_of(HANGING) == "interrupted"
                await pilot.press("i")  # re-verify what was cut off
                await run_to_end(app, pilot)
                assert app.main.grid.status_of(HANGING) == "pass"
                assert not app.main.query_one("#notice").display
        finally:
            await reopened.close()
    finally:
        await lab.stop()


async def test_rollback_confirmation_shows_the_recorded_values(lab, tmp_path):
    session = open_session(lab, tmp_path / "state")
    app = make_app(session, blink=False)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            app.main.go_to_step("ssh-reachable")
            await pilot.press("v")
            await run_to_end(app, pilot)
            app.main.go_to_step("link-type-ib")
            await pilot.press("a")
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the apply question")
            await pilot.press("y")
            await run_to_end(app, pilot)
            await pilot.press("r")
            await wait_until(
                pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the rollback question"
            )
            dialog = app.screen
            assert dialog.action == "rollback" and dialog.hosts == ["gpu03"]
            assert dialog.befores["gpu03"] == {"current.LINK_TYPE_P1": "ETH(2)"}
            assert "LINK_TYPE_P1='ETH(2)'" in dialog.commands["gpu03"]
            body = dialog.query_one("#confirm-commands").render().plain
            assert "restores the values recorded before the apply" in body
            assert "gpu03  current.LINK_TYPE_P1=ETH(2)" in body
            await pilot.press("escape")
            await run_to_end(app, pilot)
            assert app.main.grid.status_of("gpu03") == "pass"  # declined: nothing rolled back
    finally:
        await session.close()


async def test_stop_records_the_running_hosts_as_interrupted_and_the_ui_stays(tmp_path):
    lab = await start_lab(tmp_path / "lab", "scenario-hang.yaml")
    try:
        session = open_session(lab, tmp_path / "state")
        app = make_app(session, blink=False)
        try:
            async with app.run_test(size=(160, 48)) as pilot:
                app.main.go_to_step("ssh-reachable")
                await pilot.press("v")
                await wait_until(
                    pilot, lambda: app.main.grid.status_of("gpu01") == "pass", what="a first result"
                )
                await pilot.press("down")  # the UI answers while the hung host runs
                assert app.main.step_id == "link-type-ib"
                await pilot.press("up", "x")
                await run_to_end(app, pilot, stopped=True)
                assert app.main.grid.status_of(HANGING) == "interrupted"
                assert app.is_running and not app.main.running()
            journal = [e["event"] for e in session.store.journal()]
            assert any(
                e["type"] == "HostFinished" and e["host"] == HANGING and e["status"] == "interrupted"
                for e in journal
            )
        finally:
            await session.close()
    finally:
        await lab.stop()


async def test_the_quit_question_shows_the_run_progress_live(tmp_path):
    lab = await start_lab(tmp_path / "lab", "scenario-slow.yaml", slow_seconds=2.0)
    try:
        session = open_session(lab, tmp_path / "state")
        hosts = list(session.inventory.hosts)
        app = make_app(session, blink=False)
        try:
            async with app.run_test(size=(80, 24)) as pilot:
                await verify_until_one_is_left(app, pilot, hosts)
                await pilot.press("q")
                await wait_until(pilot, lambda: isinstance(app.screen, AskScreen), what="the quit question")
                line = app.screen.query_one("#quit-progress")
                assert f"{len(hosts) - 1}/{len(hosts)} · still running on {HANGING}" in line.render().plain
                # the slow host answers while the question is open: the line follows
                await wait_until(
                    pilot,
                    lambda: "the run has finished" in line.render().plain,
                    what="the progress line to follow the run",
                )
                await pilot.press("n")
                await pilot.pause()
                assert app.screen is app.main and app.return_code is None
                assert session.state.status("ssh-reachable", HANGING).value == "pass"
        finally:
            await session.close()
    finally:
        await lab.stop()
