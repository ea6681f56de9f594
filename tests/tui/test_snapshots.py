"""Snapshots of the main screen at 80x24 and 160x48 and of the confirmation
dialog, on a fixed run (no clock on screen, cursor blink off).
Update after a deliberate change: pytest tests/tui --snapshot-update"""

from runbook.tui.app import make_app
from runbook.tui.screens.confirm import ConfirmScreen


def test_main_screen_80x24(snap_compare, fixed_session):
    assert snap_compare(make_app(fixed_session, blink=False), terminal_size=(80, 24))


def test_main_screen_160x48(snap_compare, fixed_session):
    assert snap_compare(make_app(fixed_session, blink=False), terminal_size=(160, 48))


def test_main_screen_on_failing_hosts_160x48(snap_compare, fixed_session):
    app = make_app(fixed_session, blink=False)

    async def to_link_type(pilot):
        app.main.go_to_step("link-type-ib")
        app.main.grid.focus()
        await pilot.pause()

    assert snap_compare(app, press=["g", "right"], terminal_size=(160, 48), run_before=to_link_type)


def test_confirm_dialog(snap_compare, fixed_session):
    app = make_app(fixed_session, blink=False)
    step = fixed_session.runbook.step("link-type-ib")
    hosts = ["gpu07", "gpu31"]
    commands = {h: "mlxconfig -y -d mlx5_0 set LINK_TYPE_P1=1" for h in hosts}

    async def ask(pilot):
        app.push_screen(ConfirmScreen("apply", step.id, step.title, hosts, commands, then="reboot"))
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 30), run_before=ask)
