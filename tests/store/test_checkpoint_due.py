"""When the progress database is written (progress.checkpoint_due): at once for
the end of a piece of work or a decision, else at step boundaries and during
long steps, spaced further apart when a checkpoint itself is costly."""

from runbook.store.progress import (
    CHECKPOINT_COST_SHARE,
    CHECKPOINT_SECONDS,
    STEP_CHECKPOINT_GAP,
    checkpoint_due,
)


def test_urgent_is_written_at_once():
    assert checkpoint_due(0.0, 10.0, urgent=True)


def test_step_boundary_waits_for_the_gap():
    assert not checkpoint_due(STEP_CHECKPOINT_GAP - 0.1, 0.01, step_ended=True)
    assert checkpoint_due(STEP_CHECKPOINT_GAP, 0.01, step_ended=True)


def test_long_step_is_checkpointed_every_few_seconds():
    assert not checkpoint_due(CHECKPOINT_SECONDS - 0.1, 0.01)
    assert checkpoint_due(CHECKPOINT_SECONDS, 0.01)


def test_a_costly_checkpoint_spaces_the_next_ones():
    cost = 1.0  # a large run: one checkpoint took a second
    spacing = cost / CHECKPOINT_COST_SHARE
    assert spacing > CHECKPOINT_SECONDS
    assert not checkpoint_due(spacing - 0.1, cost, step_ended=True)
    assert not checkpoint_due(spacing - 0.1, cost)
    assert checkpoint_due(spacing, cost, step_ended=True)
    assert checkpoint_due(spacing, cost)
    assert checkpoint_due(0.0, cost, urgent=True)  # the end of the work is never held back


def test_a_checkpoint_written_in_the_background_is_the_one_written_in_place(tmp_path):
    # the TUI writes it off its event loop (Store.checkpoint_in_background), the
    # CLI in place: either way the progress database is the state fed so far
    from runbook.run.events import HostFinished
    from runbook.store.progress import PROGRESS_NAME, ProgressStorage

    from .helpers import new_store, verify_on

    progress = tmp_path / "run-1" / PROGRESS_NAME
    with new_store(tmp_path) as store:
        verify_on(store, "ofed", ["gpu01", "gpu02"], "fail", reason="5.8")
        store.write_many([HostFinished("ofed", "verify", "gpu01", "pass", "", stdout="23.10\n")])
        assert store.catch_up(checkpoint=False) is False  # not due: nothing forces one here
        store.checkpoint_in_background().result(timeout=30)
        background = ProgressStorage(progress).read()
        store.checkpoint()
        in_place = ProgressStorage(progress).read()
        at = ("events", "head", "offset", "crc")
        assert {k: in_place["meta"]["1"][k] for k in at} == {k: background["meta"]["1"][k] for k in at}
        assert {t: d for t, d in in_place.items() if t != "meta"} == {
            t: d for t, d in background.items() if t != "meta"
        }
        assert background["meta"]["1"]["events"] == store.run_info()["events"]
