"""Toasts never cover a dialog and never stack deep (issue 17, TUI)."""

from textual.widgets._toast import Toast, ToastRack

from runbook.tui.app import MAX_TOASTS, make_app
from runbook.tui.screens.reason import ReasonScreen

from .helpers import toasts


def drawn(screen) -> int:
    """How many toasts take room on this screen (run_test draws them only with notifications=True)."""
    return sum(1 for t in screen.get_child_by_type(ToastRack).query(Toast) if t.region.area)


async def test_a_toast_raised_under_a_dialog_waits_until_it_closes(fixed_session):
    app = make_app(fixed_session, blink=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        app.main.go_to_step("link-type-ib")
        app.notify("an older toast")
        await pilot.pause()
        await pilot.pause()
        assert drawn(app.main) == 1
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, ReasonScreen)
        await pilot.pause()
        assert not drawn(app.screen)  # the older one is not drawn over the dialog
        app.main.notify("verify finished while you typed", title="verify link-type-ib")
        await pilot.pause()
        assert ("verify link-type-ib", "verify finished while you typed") not in toasts(app)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.main
        assert ("verify link-type-ib", "verify finished while you typed") in toasts(app)
        await pilot.pause()
        assert drawn(app.main) >= 2


async def test_toasts_do_not_stack_deep(fixed_session):
    app = make_app(fixed_session, blink=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        for i in range(8):
            app.main.notify(f"message {i}")
            await pilot.pause()
        shown = [m for _, m in toasts(app)]
        assert shown == [f"message {i}" for i in range(8 - MAX_TOASTS, 8)]  # the newest, in order


async def test_host_names_in_a_toast_are_text_not_markup(fixed_session):
    app = make_app(fixed_session, blink=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        app.main.notify("failing on gpu[07,31]")
        await pilot.pause()
        assert ("", "failing on gpu[07,31]") in toasts(app)
