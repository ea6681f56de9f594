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
    assert "setsid -f sh $d/run.sh" in text and 'kill -0 "$(cat $d/pid)"' in text
    # systemd where it runs: a named transient unit, system scope only as root
    assert "systemd-run --unit=$unit --collect" in text and '[ "$(id -u)" = 0 ]' in text
    assert "systemd-run --user --unit=$unit" in text and "/var/lib/systemd/linger/" in text
    assert "unit=runbook-r1-gpu-burn-in\n" in text
    stop = stop_command("r1", "gpu-burn-in", "verify")
    assert "d=/var/tmp/runbook-jobs/r1.gpu-burn-in.verify\n" in stop
    assert "kill -TERM -- -$(cat $d/pid)" in stop and "systemctl stop $unit" in stop
    # hostile ids cannot leave their quotes
    hostile = wrap("true", "r1", "x'; rm -rf /; '", "verify")
    assert "rm -rf" not in hostile.split("\n", 2)[0] + hostile.split("\n", 2)[1]


def test_expected_time_forms(tmp_path):
    from runbook.engine.detached import clock_text, expected_seconds

    extra = '      expected_time: "{{ burn_seconds }}"\n'
    action = _load(tmp_path, "true", extra=extra).step("burn").verify
    assert expected_seconds(action, {"burn_seconds": 600}) == 600.0
    assert expected_seconds(action, {}) is None  # not known for this host: no guess
    by_level = "      expected_time: {by: level, times: {1: 30, 3: 900}}\n"
    action = _load(tmp_path, "true", extra=by_level).step("burn").verify
    assert expected_seconds(action, {"level": 3}) == 900.0 and expected_seconds(action, {"level": 2}) is None
    assert clock_text(125, 600) == "detached job · 2m05s of about 10m00s"
    assert clock_text(700, 600) == "detached job · 11m40s, past the expected 10m00s"


def test_expected_time_is_linted(tmp_path):
    with pytest.raises(InputError, match=r"verify.expected_time .*needs `detach: true`"):
        _load(tmp_path, "false", extra="      expected_time: 60\n")
    with pytest.raises(InputError, match=r"verify.expected_time as a mapping is"):
        _load(tmp_path, "true", extra="      expected_time: {level: 3}\n")
    with pytest.raises(InputError, match=r"verify.expected_time must be seconds"):
        _load(tmp_path, "true", extra="      expected_time: soon\n")
