"""`runbook tui` refuses bad input before it takes the terminal over."""

import argparse

import pytest

from runbook.errors import InputError
from runbook.tui.launch import run_tui

from .events_fixture import DATA


def test_bad_step_files_are_reported_as_file_line_before_the_app_starts(tmp_path):
    steps = tmp_path / "steps"
    steps.mkdir()
    (steps / "10-x.yaml").write_text("phase: x\nsteps:\n  - id: a\n    id: b\n")
    args = argparse.Namespace(
        steps=str(steps),
        inventory=str(DATA / "inventory.yaml"),
        state=str(tmp_path / "state"),
        operator="t",
        run=None,
        trust_new_hosts=False,
    )
    with pytest.raises(InputError) as err:
        run_tui(args)
    assert any(str(p).startswith(str(steps / "10-x.yaml") + ":4:") for p in err.value.problems)
    assert not (tmp_path / "state").exists()  # nothing was opened
