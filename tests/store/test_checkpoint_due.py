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
