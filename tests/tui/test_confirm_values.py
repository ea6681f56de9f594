"""The rollback question shows the values it restores as key=value, nested
values as dotted paths, never a Python repr (issue 17: "No Python repr reaches
a person anywhere ... `before` values")."""

from runbook.tui.app import make_app
from runbook.tui.screens.confirm import ConfirmScreen

# what link-type-ib's apply records (runbook/parsers/mlxconfig.py's record, per device)
BEFORE = {
    "restore": ["mlx5_0 P1 2", "mlx5_6 P2 2"],
    "by_device": {"mlx5_0": {"LINK_TYPE_P1": "ETH(2)"}},
    "reboot_owed": True,
}


async def test_restored_values_read_as_key_value(fixed_session):
    app = make_app(fixed_session, blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        dialog = ConfirmScreen(
            "rollback",
            "link-type-ib",
            "Every VPI port in InfiniBand mode",
            ["gpu07", "gpu31"],
            {"gpu07": "mlxconfig ...", "gpu31": "mlxconfig ..."},
            befores={"gpu07": BEFORE, "gpu31": None},
        )
        app.push_screen(dialog)
        await pilot.pause()
        body = dialog.query_one("#confirm-commands").render().plain
        assert "restore=mlx5_0 P1 2,mlx5_6 P2 2" in body
        assert "by_device.mlx5_0.LINK_TYPE_P1=ETH(2)" in body
        assert "reboot_owed=yes" in body
        assert "gpu31  (nothing recorded)" in body
        for repr_mark in ("['", "{'", "True"):
            assert repr_mark not in body, body
