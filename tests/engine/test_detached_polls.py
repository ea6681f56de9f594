"""The detached wrapper's waits, run by the real /bin/sh with a `sleep` of this
test's first on PATH (it logs each wait, then sleeps it): a job that ends soon is
read after the designed first polls (engine/detached.py FIRST_POLLS), not after a
whole POLL_SECONDS. The setsid path: skipped where systemd runs, which the
wrapper would use instead."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from runbook.engine.detached import FIRST_POLLS, JOB_ROOT, QUICK_NAP, wrap

pytestmark = pytest.mark.skipif(
    os.path.isdir("/run/systemd/system") or not shutil.which("setsid"),
    reason="the setsid path only (no systemd as PID 1, util-linux setsid)",
)


@pytest.fixture
def run_id():
    rid = f"t{uuid.uuid4().hex[:12]}"
    yield rid
    for d in glob.glob(f"{JOB_ROOT}/{rid}.*"):
        shutil.rmtree(d, ignore_errors=True)


REAL_SLEEP = shutil.which("sleep") or "/bin/sleep"


def _fake_sleep(bin_dir: Path, log: Path, go: Path, after: int) -> None:
    script = bin_dir / "sleep"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$1" >> {log}\n'
        f'[ "$(wc -l < {log})" -ge {after} ] && : > {go}\n'
        f'exec {REAL_SLEEP} "$1"\n'
    )
    script.chmod(0o755)


def _run(text: str, bin_dir: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    return subprocess.run(["/bin/sh", "-c", text], env=env, capture_output=True, text=True, timeout=60)


def test_a_job_that_ends_soon_is_read_after_the_first_polls(tmp_path, run_id):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log, go = tmp_path / "sleeps", tmp_path / "go"
    waits = len(FIRST_POLLS) - 1  # the job ends during the next-to-last first poll
    _fake_sleep(bin_dir, log, go, after=waits)
    # the job waits for the go file with the real sleep (the logged one is on PATH too)
    job = f"until [ -f {go} ]; do {REAL_SLEEP} 0.005; done; echo done-ok"
    res = _run(wrap(job, run_id, "s", "verify"), bin_dir)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().endswith("done-ok")
    sleeps = log.read_text().split()
    # any waits for the job's pid come first, FIRST_POLLS[0] each (on a loaded
    # machine they may be all there is); the polls then follow the designed
    # schedule, and stop once the result is there
    rest = sleeps
    while rest and rest[0] == FIRST_POLLS[0]:
        rest = rest[1:]
    assert rest == list(FIRST_POLLS[1 : 1 + len(rest)]), sleeps
    assert waits <= len(sleeps) <= waits + 1, sleeps


def test_a_job_that_ends_at_once_is_read_without_a_wait_of_a_tenth_of_a_second(tmp_path, run_id):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log, go = tmp_path / "sleeps", tmp_path / "go"
    _fake_sleep(bin_dir, log, go, after=10**6)
    res = _run(wrap("echo quick", run_id, "s", "verify"), bin_dir)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "quick"
    sleeps = log.read_text().split() if log.exists() else []
    # the first waits, for the job's pid and for its result, are short ones: they
    # were 0.1 s each, most of a short job's time on an idle simulated node
    assert sleeps and sleeps[0] == QUICK_NAP == FIRST_POLLS[0], sleeps
