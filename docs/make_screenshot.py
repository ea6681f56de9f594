"""Write docs/screenshot.svg: the real app on the demo lab.

Starts the simulated lab (48 nodes, the demo scenario's field faults) as its
own process on loopback, verifies the first phases of the shipped runbook
through the app (as `v` does), then shows link-type-ib with the failing host
selected, and saves the screen at 160x48. gpu21's GPU link at x8 (a riser to
replace, which no apply can fix) is waived for 14 days first, so the picture
shows the fix mark (⚒) of the steps the tool can fix and a waiver with its
expiry.

    python docs/make_screenshot.py [-o docs/screenshot.svg]
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from runbook.sim.procs import SimProcess  # noqa: E402
from runbook.sim.scenario import DEFAULT  # noqa: E402
from runbook.tui.app import make_app  # noqa: E402
from runbook.workspace.project import load_project  # noqa: E402
from runbook.workspace.session import Session  # noqa: E402

PHASES = ("preflight", "hardware", "nic-mode")
SHOW = ("pcie-link-gpu", "gpu21")
WAIVE = ("pcie-link-gpu", "gpu21", "riser replacement booked (RMA 4411); re-check on arrival", 14)


async def shoot(inventory: Path, state: Path, out: Path) -> None:
    project = load_project(REPO / "steps", inventory)
    session = Session.open(project.runbook, project.inventory, state, operator="demo", stream_output=True)
    app = make_app(session, blink=False)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            main = app.main
            steps = [s for p in PHASES for s in session.steps(phase=p)]
            main.run_steps(steps, "verify", None, False, False)  # the worker `v` starts, for three phases
            await app.workers.wait_for_complete()
            step_id, host, reason, days = WAIVE  # as `w` does: the dialog proposes the failing host
            main.go_to_step(step_id)
            await pilot.press("w")
            await pilot.pause()
            assert app.screen.query_one("#reason-hosts").value == host
            app.screen.query_one("#reason-text").value = reason
            app.screen.query_one("#reason-days").value = str(days)
            await pilot.press("enter")
            await pilot.pause()
            main.go_to_step(SHOW[0])
            main.grid.focus()
            main.grid.select(SHOW[1])
            await pilot.pause(0.5)  # the output log's flush timer
            app.save_screenshot(filename=out.name, path=str(out.parent))
    finally:
        await session.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default=str(REPO / "docs" / "screenshot.svg"))
    args = ap.parse_args()
    out = Path(args.output).resolve()
    with tempfile.TemporaryDirectory(prefix="runbook-shot-") as tmp:
        with SimProcess(Path(tmp) / "lab", nodes=48, scenario=DEFAULT, reboot_seconds=1.0,
                        lifetime=600, ready_timeout=120) as sim:
            asyncio.run(shoot(sim.inventory, Path(tmp) / "state", out))
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
