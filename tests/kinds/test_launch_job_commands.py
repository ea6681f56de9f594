"""The launcher-side shell text of a `launch:` job (engine/kinds/launchjob.py),
run by the real /bin/sh with util-linux's setsid: the job runs in a process
group of its own recorded in its job directory; it outlives its wrapper (an SSH
session gone); the stop commands end the whole group, children included, say
what they ended, and leave nothing; values in them are quoted."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest

from runbook.engine.kinds import launchjob

pytestmark = pytest.mark.skipif(
    subprocess.run(["setsid", "--help"], capture_output=True, text=True).stdout.find("--wait") < 0,
    reason="util-linux setsid with --wait is needed",
)

HOSTS = ["gpu01", "gpu02"]


def sh(text: str, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", "-c", text], capture_output=True, text=True, timeout=timeout)


def wait_for(path: Path, timeout: float = 10) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.02)
    raise AssertionError(f"{path} never written")


def group_alive(pgid: int) -> bool:
    """A live (not zombie) process in the group. A job whose wrapper was killed is
    an orphan, and a container's PID 1 may never reap it: a zombie is dead."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return True
    return False


@pytest.fixture(autouse=True)
def short_grace(monkeypatch):
    # kill -0 still finds a zombie (above): the stop then waits out its grace
    monkeypatch.setattr(launchjob, "STOP_GRACE_SECONDS", 1)


@pytest.fixture
def root(tmp_path):
    # a root with a space and a quote: every path in the commands must be quoted
    r = tmp_path / "job root's dir"
    r.mkdir()
    return str(r)


def test_a_job_that_ends_gives_its_output_and_status_and_leaves_nothing(root):
    d = launchjob.job_dir("run-1", "nccl-inter-node", HOSTS, root)
    res = sh(launchjob.wrap('echo "it\'s $(echo busbw)"; echo oops >&2; exit 3', d, HOSTS))
    assert (res.returncode, res.stdout, res.stderr) == (3, "it's busbw\n", "oops\n")
    assert not Path(d).exists()
    assert os.listdir(root) == []


def test_a_job_cut_off_from_its_session_is_ended_with_its_children(root):
    d = launchjob.job_dir("run-1", "nccl-inter-node", HOSTS, root)
    child = Path(root) / "child.pid"
    # a job that starts a child of its own (mpirun and its rsh agents)
    job = f"sleep 60 & echo $! > {shlex.quote(str(child))}; wait"
    wrapper = subprocess.Popen(["sh", "-c", launchjob.wrap(job, d, HOSTS)], stdout=subprocess.DEVNULL)
    pgid = 0
    try:
        pgid = int(wait_for(Path(d) / "pid"))
        grandchild = int(wait_for(child))
        assert os.getpgid(grandchild) == pgid != os.getpgid(0)  # a group of its own
        assert (Path(d) / "hosts").read_text() == "gpu01 gpu02\n"
        # the tool is killed: its session goes, the job does not
        wrapper.kill()
        wrapper.wait()
        time.sleep(0.2)
        assert group_alive(pgid)

        res = sh(launchjob.stop_step_command("run-1", "nccl-inter-node", root))
        assert res.returncode == 0, res.stderr
        assert launchjob.ended(res.stdout) == [
            f"{launchjob.ENDED} in {d} (process group {pgid}, hosts gpu01 gpu02)"
        ]
        assert not group_alive(pgid)
        assert not Path(d).exists()
        # nothing left: said so, and nothing is ended twice
        again = sh(launchjob.stop_step_command("run-1", "nccl-inter-node", root))
        assert again.stdout.strip() == launchjob.NONE_LEFT and not launchjob.ended(again.stdout)
    finally:
        if pgid and group_alive(pgid):
            os.killpg(pgid, signal.SIGKILL)
        if wrapper.poll() is None:
            wrapper.kill()
            wrapper.wait()


def test_the_stop_of_one_job_ends_that_job_only(root):
    a = launchjob.job_dir("run-1", "nccl-inter-node", HOSTS, root)
    b = launchjob.job_dir("run-1", "nccl-inter-node", ["gpu03", "gpu04"], root)
    other_step = launchjob.job_dir("run-1", "nccl-alltoall", HOSTS, root)
    other_run = launchjob.job_dir("run-2", "nccl-inter-node", HOSTS, root)
    assert len({a, b, other_step, other_run}) == 4
    procs = [
        subprocess.Popen(["sh", "-c", launchjob.wrap("sleep 60", d, HOSTS)], stdout=subprocess.DEVNULL)
        for d in (a, b, other_step, other_run)
    ]
    groups: list[int] = []
    try:
        groups += [int(wait_for(Path(d) / "pid")) for d in (a, b, other_step, other_run)]
        res = sh(launchjob.stop_command(a))
        assert len(launchjob.ended(res.stdout)) == 1
        assert [group_alive(g) for g in groups] == [False, True, True, True]
        # a resume of run-1's nccl-inter-node: its other job too, nothing of another step or run
        res = sh(launchjob.stop_step_command("run-1", "nccl-inter-node", root))
        assert len(launchjob.ended(res.stdout)) == 1
        assert [group_alive(g) for g in groups] == [False, False, True, True]
    finally:
        for g in groups:  # only the groups this test started, by their id
            if group_alive(g):
                os.killpg(g, signal.SIGKILL)
        for p in procs:
            p.wait(10)


def test_a_job_that_ignores_sigterm_is_killed_after_the_grace(root):
    d = launchjob.job_dir("run-1", "s", HOSTS, root)
    wrapper = subprocess.Popen(
        ["sh", "-c", launchjob.wrap("trap '' TERM; sleep 60", d, HOSTS)], stdout=subprocess.DEVNULL
    )
    pgid = int(wait_for(Path(d) / "pid"))
    try:
        time.sleep(0.2)  # the trap is set
        res = sh(launchjob.stop_command(d))
        assert launchjob.ended(res.stdout)
        assert not group_alive(pgid)
    finally:
        if group_alive(pgid):
            os.killpg(pgid, signal.SIGKILL)
        wrapper.wait(10)


def test_a_pid_file_that_is_not_a_process_group_is_never_signalled(root):
    d = Path(launchjob.job_dir("run-1", "s", HOSTS, root))
    for junk in ("0", "1", "-1", "x", "$(touch pwned)"):
        d.mkdir()
        (d / "pid").write_text(junk + "\n")
        res = sh(launchjob.stop_command(str(d)))
        assert (res.returncode, res.stdout.strip()) == (0, launchjob.NONE_LEFT), (junk, res)
        assert not d.exists()
    assert not (Path(root) / "pwned").exists() and not (Path.cwd() / "pwned").exists()


def test_names_are_made_safe_and_values_quoted(root):
    d = launchjob.job_dir("run; rm -rf /", "step $(id)", ["h'1"], root)
    name = os.path.basename(d)
    assert name.startswith("run_rm_-rf_.step_id_.") and "/" not in name
    text = launchjob.wrap("true", d, ["h'1", "$(touch pwned)"])
    assert shlex.quote(d) in text and "'h'\"'\"'1 $(touch pwned)'" in text
    res = sh(text)
    assert res.returncode == 0, res.stderr
    assert not (Path.cwd() / "pwned").exists() and not (Path(root) / "pwned").exists()
    stop = launchjob.stop_step_command("run; rm -rf /", "step $(id)", root)
    assert shlex.quote(launchjob.step_prefix("run; rm -rf /", "step $(id)", root)) + "*" in stop
    assert sh(stop).stdout.strip() == launchjob.NONE_LEFT


def test_the_shipped_root_is_under_var_tmp():
    d = launchjob.job_dir("20261201-0310", "nccl-inter-node", HOSTS)
    assert d.startswith("/var/tmp/runbook-launch/20261201-0310.nccl-inter-node.")
