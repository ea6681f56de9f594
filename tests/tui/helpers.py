"""Waiting on the app, never sleeping blindly."""

from __future__ import annotations

from collections.abc import Callable


async def wait_until(pilot, condition: Callable[[], bool], timeout: float = 15.0, what: str = "") -> None:
    """Let the app run until condition() holds (bounded)."""
    loop_time = 0.0
    while not condition():
        if loop_time > timeout:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or condition}")
        await pilot.pause(0.05)
        loop_time += 0.05


async def verify_until_one_is_left(app, pilot, hosts: list[str]) -> None:
    """Verify ssh-reachable from the step list and wait until every host but one
    (the slow or hung one of the scenario) has answered."""
    app.main.go_to_step("ssh-reachable")
    await pilot.press("v")
    await wait_until(
        pilot,
        lambda: app.main.feed.progress is not None and app.main.feed.progress.done == len(hosts) - 1,
        what="every host but the slow one",
    )


async def run_to_end(app, pilot, *, stopped: bool = False) -> None:
    """Wait for the step's worker, then for the final repaint to be drawn. `stopped`:
    the test stopped the run (x); its worker then ends cancelled, once its clean-up (the
    interrupted hosts recorded) is done, and waiting for it says so (WorkerCancelled).
    Under load the worker may still be winding down when this is called."""
    from textual.worker import WorkerCancelled

    for worker in list(app.workers):
        try:
            await worker.wait()
        except WorkerCancelled:
            if not stopped:
                raise
    await pilot.pause()


def counts(app, step_id: str) -> dict[str, int]:
    return dict(app.main.query_one("#steps").rows[step_id].counts)


def toasts(app) -> list[tuple[str, str]]:
    """(title, message) of the toasts on screen, oldest first."""
    return [(n.title, n.message) for n in app._notifications]
