"""What a new user sees: the header's counts, the continue key in the footer and
the first-start line (issue 17, TUI)."""

import pytest
from textual.widgets import Footer

from runbook.tui.app import make_app
from runbook.workspace.session import Session


@pytest.fixture
def new_session(tmp_path, project):
    session = Session.open(project.runbook, project.inventory, tmp_path / "new-state", operator="alice")
    yield session
    session.store.close()


def footer_keys(app) -> dict[str, str]:
    from textual.widgets._footer import FooterKey

    return {k.key: k.description for k in app.main.query_one(Footer).query(FooterKey)}


async def test_a_new_run_says_which_keys_to_press_and_shows_continue_in_the_footer(new_session):
    app = make_app(new_session, blink=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        notice = app.main.query_one("#notice")
        assert notice.display and "c runs everything, ? lists the keys" in notice.render().plain
        assert footer_keys(app).get("c") == "Continue"
        await pilot.press("escape")
        await pilot.pause()
        assert not notice.display


async def test_a_resumed_run_does_not_repeat_the_first_start_line(fixed_session):
    app = make_app(fixed_session, blink=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        assert "c runs everything" not in app.main.query_one("#notice").render().plain
        assert footer_keys(app).get("c") == "Continue"


async def test_the_header_counts_passes_only_with_skipped_and_waived_beside(fixed_session):
    app = make_app(fixed_session, blink=False)
    async with app.run_test(size=(160, 48)) as pilot:
        header = app.main.query_one("#header")
        assert "0/4 steps passed" in header.render().plain
        fixed_session.decide("skip", "link-type-ib", "", "cards on order")
        fixed_session.decide("waive", "ssh-reachable", "gpu12", "PSU swap tomorrow")
        app.main.repaint(everything=True)
        await pilot.pause()
        text = header.render().plain
        assert "0/4 steps passed · 1 skipped · 1 waived" in text  # a skip or a waiver is not a pass
