"""`detach:` in the step format (docs/long-running-steps.md): loaded, linted with
FILE:LINE, and turned into a wrapper that starts or re-attaches a node-side job."""

import textwrap

import pytest

from runbook.definition.loader import load_runbook
from runbook.engine.detached import job_dir, stop_command, wrap
from runbook.errors import InputError

STEP = """\
phase: burn
title: Burn-in
steps:
  - id: burn
    title: Burn
    why: a long one
    hosts: compute
    verify:
      run: gpu_burn 600
      detach: {detach}
{extra}
"""


def _load(tmp_path, detach, extra=""):
    (tmp_path / "10-burn.yaml").write_text(textwrap.dedent(STEP.format(detach=detach, extra=extra)))
    return load_runbook(tmp_path)


def test_detach_is_loaded(tmp_path):
    assert _load(tmp_path, "true").step("burn").verify.detach is True
    assert _load(tmp_path, "false").step("burn").verify.detach is False


def test_detach_must_be_a_boolean(tmp_path):
    with pytest.raises(InputError, match=r"10-burn.yaml:10: step burn: verify.detach must be true or false"):
        _load(tmp_path, "'yes please'")


def test_detached_command_cannot_owe_a_reboot(tmp_path):
    with pytest.raises(InputError, match="cannot also owe a reboot"):
        _load(tmp_path, "true", "      then: reboot")


def test_wrapper_names_the_job_by_run_step_and_action_and_keeps_the_command_verbatim():
    assert (
        job_dir("20261130-1", "gpu-burn-in", "verify")
        == "/var/tmp/runbook-jobs/20261130-1.gpu-burn-in.verify"
    )
    assert job_dir("a b;rm", "x/y", "verify") == "/var/tmp/runbook-jobs/a_b_rm.x_y.verify"
    command = "cd /opt/gpu-burn && ./gpu_burn 'quoted $HOME' 600\nRUNBOOK_JOB_EOF"
    text = wrap(command, "r1", "gpu-burn-in", "verify")
    assert "<<'RUNBOOK_JOB_EOF_'\n" + command + "\nRUNBOOK_JOB_EOF_\n" in text  # a quoted here-document
    assert "setsid -f sh $d/run.sh" in text and "kill -0 $(cat $d/pid)" in text
    assert "kill -TERM -- -$(cat /var/tmp/runbook-jobs/r1.gpu-burn-in.verify/pid)" in stop_command(
        "r1", "gpu-burn-in", "verify"
    )
