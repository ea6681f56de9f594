"""A run that ends redraws its own steps, not every step of the runbook: with
60 steps x 1,000 hosts, every step meant 60,000 verdicts recomputed on the UI
loop at the end of each run (bench/results/tui_latency.md)."""

from runbook.tui.app import make_app


async def test_the_end_of_a_run_recomputes_the_rows_of_its_steps_only(fixed_session):
    app = make_app(fixed_session, blink=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        main = app.main
        assert len(main.rows) > 2
        computed: list[str] = []
        real_row = main.view.row

        def row(step_id, at=None):
            computed.append(step_id)
            return real_row(step_id, at)

        main.view.row = row
        main.go_to_step("link-type-ib")
        assert main.repaint(steps=("link-type-ib",))
        assert computed == ["link-type-ib"]
        # the grid of the step on show is re-read whole: its hosts' statuses as stored
        step = "link-type-ib"
        assert {h: main.grid.status_of(h) for h in main.view.hosts_of(step)} == main.view.statuses(step)
        computed.clear()
        main.repaint(everything=True)  # still there for what needs it (a resume, a reload)
        assert sorted(computed) == sorted(main.rows)
