"""The pair results under the step detail (issue 14 item 3): after a real run of
the shipped runbook over SSH against a lab with `cable_ber` on gpu03 mlx5_2, the
TUI shows ib-pair-bw per rail with the slow link named, and hides the view on a
per-host step."""

from __future__ import annotations

from runbook.tui.app import make_app
from runbook.tui.widgets.pair_results import PairResults
from tests.steps.simlab import LabRun


async def test_the_pair_step_shows_its_rails_with_the_slow_link_named(tmp_path):
    run = await LabRun.start(tmp_path, nodes=4, faults={"gpu03": [{"cable_ber": "mlx5_2"}]})
    try:
        await run.run(None)
        app = make_app(run.session, blink=False)
        async with app.run_test(size=(160, 48)) as pilot:
            app.main.go_to_step("ib-pair-bw")
            await pilot.pause()
            view = app.main.query_one(PairResults)
            assert not view.has_class("-hidden")
            text = view.render().plain
            assert "rail 3" in text and "slow links: rail 3 mlx5_2: gpu03" in text
            assert "slow hosts: none" in text
            line = next(ln for ln in text.splitlines() if ln.strip().startswith("gpu03 mlx5_2"))
            assert "✗✗ gpu04" in line
            spans = [s for s in view.render().spans if "red" in str(s.style)]
            assert spans  # the named link is coloured
            app.main.go_to_step("nccl-alltoall")
            await pilot.pause()
            assert (
                "round 1: ✗ gpu[01-04]" in view.render().plain
                or "round 1: ✓ gpu[01-04]" in view.render().plain
            )
            app.main.go_to_step("ssh-reachable")
            await pilot.pause()
            assert view.has_class("-hidden")
    finally:
        await run.stop()
