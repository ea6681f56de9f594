"""The app driven by keys against the simulated lab (real SSH on loopback,
real store, real engine): verify, apply through the confirmation, cancel."""

from runbook.tui.app import make_app
from runbook.tui.screens.confirm import ConfirmScreen

from .conftest import open_session
from .helpers import counts, run_to_end, toasts, wait_until


async def test_verify_a_step_changes_the_grid_and_the_counts(lab, tmp_path):
    session = open_session(lab, tmp_path / "state")
    app = make_app(session, blink=False)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            app.main.go_to_step("ssh-reachable")
            grid = app.main.grid
            assert {grid.status_of(h) for h in grid.visible} == {"pending"}
            assert counts(app, "ssh-reachable") == {"pending": 10}  # 8 compute + 2 SM nodes
            await pilot.press("v")
            await run_to_end(app, pilot)
            assert counts(app, "ssh-reachable") == {"unknown": 1, "pass": 9}
            assert ("verify ssh-reachable", "9 passed; unknown on gpu05") in toasts(app)  # in words
            assert grid.status_of("gpu05") == "unknown" and grid.status_of("gpu01") == "pass"
            assert app.main.query_one("#host-summary").render().plain.endswith("? gpu05")
            assert app.main.query_one("#header").facts.activity == ""  # the run is over
            grid.select("gpu05")
            await pilot.pause()
            reason = app.main.query_one("#reason").render().plain
            assert "gpu05" in reason and "unknown" in reason
    finally:
        await session.close()


async def test_apply_goes_through_the_confirmation_and_cancel_changes_nothing(lab, tmp_path):
    session = open_session(lab, tmp_path / "state")
    app = make_app(session, blink=False)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            app.main.go_to_step("ssh-reachable")  # link-type-ib needs it
            await pilot.press("v")
            await run_to_end(app, pilot)
            app.main.go_to_step("link-type-ib")
            await pilot.press("a")  # verifies first, then asks about the failing host
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirmation")
            dialog = app.screen
            assert dialog.action == "apply" and dialog.hosts == ["gpu03"]
            assert "LINK_TYPE_P1=1" in dialog.commands["gpu03"] and dialog.then == "reboot"
            await pilot.press("n")
            await run_to_end(app, pilot)
            assert app.main.grid.status_of("gpu03") == "fail"
            assert session.state.before("link-type-ib", "gpu03") is None  # nothing was applied
            assert [d.kind for d in session.state.decisions] == ["decline"]

            await pilot.press("a")
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirmation")
            await pilot.press("y")
            await run_to_end(app, pilot)
            assert app.main.grid.status_of("gpu03") == "pass"  # applied, rebooted, verified again
            assert ("apply link-type-ib", "applied on 1 host; re-verify passed") in toasts(app)
            assert counts(app, "link-type-ib")["pass"] == 7  # gpu05 is unreachable: blocked
            assert session.state.before("link-type-ib", "gpu03") is not None
            assert not session.state.pending  # the reboot was done
    finally:
        await session.close()


async def test_only_the_host_on_show_streams_its_lines(lab, tmp_path):
    session = open_session(lab, tmp_path / "state")
    app = make_app(session, blink=False)
    streamed: set[tuple[str, str]] = set()
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            original = app.main.on_events

            def spy(batch):
                streamed.update((e.step_id, e.host) for e in batch if type(e).__name__ == "HostOutput")
                return original(batch)

            app.main.on_events = spy
            app.main.go_to_step("ssh-reachable")
            app.main.grid.select("gpu02")
            await pilot.press("v")
            await run_to_end(app, pilot)
            assert streamed <= {("ssh-reachable", "gpu02")}
            assert counts(app, "ssh-reachable") == {"unknown": 1, "pass": 9}
            log = app.main.output_log
            assert any("load average" in line for line in log.lines)  # the whole output, at the end
            app.main.grid.select("gpu04")  # another host: its whole output is there too
            await pilot.pause()
            assert any("load average" in line for line in log.lines)
    finally:
        await session.close()


async def test_continue_verifies_every_step_top_to_bottom(lab, tmp_path):
    session = open_session(lab, tmp_path / "state")
    app = make_app(session, blink=False)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.press("c")
            await run_to_end(app, pilot)
            # every step ran, in order; link-type-ib ran after its prerequisite
            assert counts(app, "ssh-reachable") == {"unknown": 1, "pass": 9}
            assert counts(app, "link-type-ib") == {"fail": 1, "blocked": 1, "pass": 6}
            # nothing left to do: a second `c` re-runs only what has not passed
            before = len(session.store.journal())
            await pilot.press("c")
            await run_to_end(app, pilot)
            started = [
                e["event"]["hosts"]
                for e in session.store.journal()[before:]
                if e["event"]["type"] == "StepStarted"
            ]
            assert all(len(h) <= 2 for h in started), started  # the failing/unknown hosts, not all ten
    finally:
        await session.close()
