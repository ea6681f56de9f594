"""The engine on its own thread (workspace/engine_thread.py): the TUI's loop
handles keys while the engine's is busy, and quitting mid-run stops the run
there, records it whole and ends the thread."""

import threading

from runbook.tui.app import make_app
from runbook.tui.screens.ask import AskScreen

from .conftest import open_session, start_lab
from .helpers import run_to_end, verify_until_one_is_left, wait_until

HANGING = "gpu06"  # answers late in scenario-slow.yaml


def engine_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "runbook-engine"]


async def test_a_key_is_handled_while_the_engine_is_stuck_in_a_store_write(lab, tmp_path):
    session = open_session(lab, tmp_path / "state")
    app = make_app(session, blink=False)
    held, release = threading.Event(), threading.Event()
    gave_up: list[bool] = []  # the engine stopped waiting for the key
    fold = session.store.catch_up

    def stuck_fold(*args, **kw):
        # The first batch's fold holds the engine's loop until the test has seen its key
        # handled: on a loop shared with the UI, the key could not be handled meanwhile.
        if not release.is_set():
            held.set()
            gave_up.append(not release.wait(10))
            release.set()
        return fold(*args, **kw)

    session.store.catch_up = stuck_fold
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            app.main.go_to_step("ssh-reachable")
            await pilot.press("v")
            await wait_until(pilot, held.is_set, what="the engine in its first fold")
            await pilot.press("down")  # the step list: to the next step
            assert app.main.step_id == "link-type-ib"
            assert not release.is_set()  # handled while the engine's loop was still held
            release.set()
            await run_to_end(app, pilot)
            assert gave_up == [False]
            assert session.state.status("ssh-reachable", "gpu01").value == "pass"
    finally:
        release.set()
        await session.close()


async def test_quitting_mid_run_stops_the_engine_thread_and_the_run_is_whole(tmp_path):
    lab = await start_lab(tmp_path / "lab", "scenario-slow.yaml", slow_seconds=3.0)
    state_dir = tmp_path / "state"
    try:
        session = open_session(lab, state_dir)
        hosts = list(session.inventory.hosts)
        folders: set[str] = set()  # the threads that fed the run state
        fold = session.store.catch_up

        def noted_fold(*args, **kw):
            folders.add(threading.current_thread().name)
            return fold(*args, **kw)

        session.store.catch_up = noted_fold
        app = make_app(session, blink=False)
        try:
            async with app.run_test(size=(160, 48)) as pilot:
                await verify_until_one_is_left(app, pilot, hosts)
                assert len(engine_threads()) == 1  # the run is on the engine's thread
                await pilot.press("q")
                await wait_until(pilot, lambda: isinstance(app.screen, AskScreen), what="the quit question")
                await pilot.press("y")
                await wait_until(pilot, lambda: app.return_code is not None, what="the app to exit")
                assert not app.main.running()
            assert folders == {"runbook-engine"}  # not the UI's thread
            journal = [e["event"] for e in session.store.journal()]
            assert any(  # the stop was recorded by the run itself, before the app ended
                e["type"] == "HostFinished" and e["host"] == HANGING and e["status"] == "interrupted"
                for e in journal
            )
        finally:
            await session.close()
        assert engine_threads() == []  # closing the session ended it
        reopened = open_session(lab, state_dir)  # the journal reads back whole (its hash chain checked)
        try:
            assert reopened.store.came_back == {}  # nothing was left running in the journal
            assert reopened.state.status("ssh-reachable", HANGING).value == "interrupted"
            assert {reopened.state.status("ssh-reachable", h).value for h in hosts if h != HANGING} == {
                "pass"
            }
        finally:
            await reopened.close()
    finally:
        await lab.stop()
