"""Steps with a fix are marked; a waiver takes an expiry; notes and waivers show
on their step (issue 17, TUI)."""

import time

from runbook.tui.app import make_app
from runbook.tui.screens.help import HelpScreen
from runbook.tui.screens.reason import ReasonScreen


def prompt(app, step_id: str) -> str:
    steps = app.main.step_list
    return steps.get_option(step_id).prompt.plain


def detail(app) -> str:
    """The step pane's text, as drawn from what the screen handed it."""
    from runbook.tui.widgets.step_detail import detail_renderable

    return "\n".join(t.plain for t in detail_renderable(app.main.detail.text).renderables)


async def test_steps_with_a_fix_are_marked_and_the_help_says_what_the_mark_means(fixed_session):
    app = make_app(fixed_session, blink=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        assert "link-type-ib ⚒" in prompt(app, "link-type-ib")  # it has an apply
        assert "⚒" not in prompt(app, "ofed-version")  # verify only
        assert "cabling-walked ✎" in prompt(app, "cabling-walked") and "⚒" not in prompt(
            app, "cabling-walked"
        )
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = " ".join(str(w.render()) for w in app.screen.query("Static"))
        assert "⚒ has a fix" in text


async def test_a_note_shows_on_its_step(fixed_session):
    app = make_app(fixed_session, blink=False)
    async with app.run_test(size=(160, 48)) as pilot:
        app.main.go_to_step("cabling-walked")  # the fixed run has a note on gpu[01-04]
        await pilot.pause()
        assert "note by alice on gpu[01-04]: walked rack 1" in detail(app)
        app.main.go_to_step("ofed-version")
        await pilot.pause()
        assert "walked rack 1" not in detail(app)  # on its step only


async def test_a_waiver_takes_an_expiry_and_shows_it_on_the_step(fixed_session):
    app = make_app(fixed_session, blink=False)
    async with app.run_test(size=(160, 48)) as pilot:
        app.main.go_to_step("link-type-ib")
        await pilot.press("w")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ReasonScreen)
        assert dialog.query_one("#reason-days").value == "30"  # a waiver lapses unless told otherwise
        dialog.query_one("#reason-text").value = "cards replaced next week"
        dialog.query_one("#reason-days").value = "0"
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is dialog  # refused, says why
        assert "at most 3650 days" in dialog.query_one("#reason-error").render().plain
        assert not [d for d in fixed_session.state.decisions if d.kind == "waive"]
        dialog.query_one("#reason-days").value = "7"
        before = time.time()
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is app.main
        [waive] = [d for d in fixed_session.state.decisions if d.kind == "waive"]
        assert waive.hosts == frozenset({"gpu07", "gpu31"})
        assert before + 7 * 86400 - 5 <= waive.expires <= time.time() + 7 * 86400
        day = time.strftime("%Y-%m-%d", time.localtime(waive.expires))
        assert f"waive by alice on gpu[07,31] (until {day}" in detail(app)
        assert "cards replaced next week" in detail(app)
        assert {app.main.grid.status_of(h) for h in ("gpu07", "gpu31")} == {"waived"}
