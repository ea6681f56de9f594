"""The help says that a waiver lapses, and after how long by default."""

from runbook.tui.app import make_app
from runbook.tui.screens.help import HelpScreen
from runbook.tui.screens.reason import WAIVE_DAYS


async def test_the_help_says_a_waiver_lapses(fixed_session):
    app = make_app(fixed_session, blink=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = " ".join(str(w.render()) for w in app.screen.query("Static"))
        assert f"lapses after {WAIVE_DAYS} days" in " ".join(text.split())
