"""The app on a fixed run (no lab): resume, skip/waive/note, palette, layout."""

from runbook.tui.app import make_app
from runbook.tui.screens.reason import ReasonScreen

from .events_fixture import INTERRUPTED
from .helpers import counts


async def test_resume_shows_the_interrupted_hosts_and_starts_on_the_first_open_step(fixed_session):
    app = make_app(fixed_session, blink=False)
    async with app.run_test(size=(160, 48)):
        notice = app.main.query_one("#notice")
        assert notice.display
        assert (
            f"{len(INTERRUPTED)} hosts were interrupted in link-type-ib (gpu[40-42]); re-verify?"
            in notice.render().plain
        )
        assert app.main.step_id == "ssh-reachable"  # gpu12 never answered: not passed
        assert app.main.query_one("#steps").step_id == "ssh-reachable"
        app.main.go_to_step("link-type-ib")
        assert {app.main.grid.status_of(h) for h in ("gpu40", "gpu41", "gpu42")} == {"interrupted"}


async def test_skip_without_a_reason_is_refused_and_with_one_is_recorded(fixed_session):
    app = make_app(fixed_session, blink=False)
    async with app.run_test(size=(160, 48)) as pilot:
        app.main.go_to_step("link-type-ib")
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(app.screen, ReasonScreen)
        await pilot.press("enter")  # no reason typed
        await pilot.pause()
        assert isinstance(app.screen, ReasonScreen)  # still asking
        assert "a reason is required" in app.screen.query_one("#reason-error").render().plain
        assert not [d for d in fixed_session.state.decisions if d.kind == "skip"]
        app.screen.query_one("#reason-hosts").value = "gpu31"
        await pilot.press(*"cable on order")
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, ReasonScreen)
        skip = [d for d in fixed_session.state.decisions if d.kind == "skip"]
        assert len(skip) == 1 and skip[0].reason == "cable on order" and skip[0].hosts == frozenset({"gpu31"})
        assert app.main.grid.status_of("gpu31") == "skipped"
        assert counts(app, "link-type-ib")["fail"] == 1
    # and it is in the store: a fresh replay sees it
    entries = [e["event"] for e in fixed_session.store.journal() if e["event"]["type"] == "OperatorDecision"]
    assert any(e["kind"] == "skip" and e["reason"] == "cable on order" for e in entries)


async def test_waive_proposes_only_the_failing_hosts(fixed_session):
    app = make_app(fixed_session, blink=False)
    async with app.run_test(size=(160, 48)) as pilot:
        app.main.go_to_step("link-type-ib")
        await pilot.press("w")
        await pilot.pause()
        # gpu[40-42] were interrupted: nobody has seen their result, so they are not proposed
        assert app.screen.query_one("#reason-hosts").value == "gpu[07,31]"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.main and not [d for d in fixed_session.state.decisions if d.kind == "waive"]


async def test_command_palette_offers_actions_and_steps(fixed_session):
    app = make_app(fixed_session, blink=False)
    async with app.run_test(size=(160, 48)) as pilot:
        titles = [c.title for c in app.get_system_commands(app.main)]
        assert {"Verify step", "Apply", "Rollback", "Skip", "Waive", "Export signed log"} <= set(titles)
        await pilot.press("ctrl+p")
        await pilot.press(*"cabling")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert app.main.step_id == "cabling-walked"


async def test_80x24_keeps_every_pane_on_screen(fixed_session):
    app = make_app(fixed_session, blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "-narrow" in app.main.classes and "-short" in app.main.classes
        for pane in ("#header", "#steps", "#detail", "#grid", "#reason", "#output"):
            region = app.main.query_one(pane).region
            assert region.width > 0 and region.height > 0, pane
            assert region.right <= 80 and region.bottom <= 24, pane
        assert app.main.query_one("#grid").region.height >= 4  # the grid keeps room to read


async def test_no_color_keeps_the_glyphs(fixed_session, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(fixed_session, blink=False)
    async with app.run_test(size=(160, 48)) as pilot:
        assert app.no_color
        app.main.go_to_step("link-type-ib")
        await pilot.pause()
        row = app.main.grid.render_line(0).text
        assert "✔ gpu01" in row and "✖ gpu07" in row
