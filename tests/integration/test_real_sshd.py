"""The engine and CLI against a real OpenSSH sshd on loopback, running real
commands in a real shell: verdicts, outputs, exit statuses, timeouts, and a
changed host key refused (unknown, never pass)."""

import json
import os
import platform
import textwrap

from tests.sshd_server import sshd_server  # noqa: F401  (fixture)

from .conftest import REPO

STEPS = """\
phase: real
title: Real commands
steps:
  - id: kernel
    title: Kernel as expected
    why: a real command, its output judged against an inventory value
    hosts: all
    verify:
      run: uname -r
      expect:
        - {matches: "^{{ kernel }}$"}
  - id: meminfo
    title: memory reported
    why: a real file read by a real shell
    hosts: all
    verify:
      run: cat /proc/meminfo | head -3
      expect:
        - {contains: MemTotal}
  - id: exits-three
    title: a command whose exit 3 is the expected one
    why: exit statuses are kept
    hosts: all
    verify:
      run: sh -c 'exit 3'
      expect:
        - {exit: 3}
  - id: exits-three-wrongly
    title: the same exit where 0 is expected
    why: a non-zero exit fails with expected vs found
    hosts: all
    verify:
      run: sh -c 'echo boom >&2; exit 3'
  - id: too-slow
    title: a command that outlives its timeout
    why: a timeout is unknown, not fail
    hosts: all
    verify:
      run: sleep 5
      timeout: 1
"""


def setup(tmp_path, srv, known_hosts):
    steps = tmp_path / "steps"
    steps.mkdir()
    (steps / "10-real.yaml").write_text(STEPS)
    inv = tmp_path / "inventory.yaml"
    inv.write_text(
        textwrap.dedent(f"""\
        all:
          vars:
            kernel: "{platform.release()}"
            runbook_known_hosts: {known_hosts}
          hosts:
            real1:
              ansible_host: 127.0.0.1
              ansible_port: {srv.port}
              ansible_user: {srv.user}
              ansible_ssh_private_key_file: {srv.client_key}
        """)
    )
    return steps, inv


def run(tmp_path, steps, inv, *extra):
    import subprocess
    import sys

    env = dict(os.environ, RUNBOOK_OPERATOR="tester", PYTHONPATH=str(REPO), HOME=str(tmp_path))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "runbook",
            "run",
            "--all",
            "--json",
            "--steps",
            str(steps),
            "--inventory",
            str(inv),
            "--state",
            str(tmp_path / "state"),
            *extra,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def hosts_of(proc):
    return {s["id"]: s["hosts"]["real1"] for s in json.loads(proc.stdout)["steps"]}


def test_real_commands_verdicts_and_timeouts(tmp_path, sshd_server):
    known = tmp_path / "known_hosts"
    known.write_text(sshd_server.known_hosts_line())
    steps, inv = setup(tmp_path, sshd_server, known)
    proc = run(tmp_path, steps, inv)
    assert proc.returncode == 1, proc.stderr  # one step fails (exit 3 where 0 is expected)
    h = hosts_of(proc)
    assert h["kernel"]["status"] == "pass" and h["meminfo"]["status"] == "pass"
    assert h["exits-three"] == {"status": "pass", "exit_status": 3, "reason": "", "action": "verify"}
    bad = h["exits-three-wrongly"]
    assert bad["status"] == "fail" and bad["exit_status"] == 3
    assert bad["reason"] == "exit status 3 (expected 0) — stderr: boom"
    assert h["too-slow"]["status"] == "unknown" and "timeout" in h["too-slow"]["reason"]


def test_changed_host_key_is_refused(tmp_path, sshd_server):
    known = tmp_path / "known_hosts"
    known.write_text(sshd_server.known_hosts_line())
    steps, inv = setup(tmp_path, sshd_server, known)
    sshd_server.new_host_key()  # the node was "reinstalled"
    sshd_server.restart()
    proc = run(tmp_path, steps, inv)
    assert proc.returncode == 3, proc.stderr  # unknown everywhere, no pass, no fail
    for step, res in hosts_of(proc).items():
        assert res["status"] == "unknown", (step, res)
        assert "host key" in res["reason"] and "changed" in res["reason"], res["reason"]


def test_unknown_host_key_is_refused_then_pinned_on_first_use(tmp_path, sshd_server):
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    steps, inv = setup(tmp_path, sshd_server, empty)
    proc = run(tmp_path, steps, inv)
    assert proc.returncode == 3
    assert all("no known key" in r["reason"] for r in hosts_of(proc).values())
    proc = run(tmp_path, steps, inv, "--trust-new-hosts")
    assert hosts_of(proc)["kernel"]["status"] == "pass"
    pinned = tmp_path / "state" / "known_hosts"  # the site's pins, not the run's
    assert "ssh-ed25519" in pinned.read_text()
    # the fingerprint is evidence in the store
    from runbook.store.store import Store

    with Store.open(tmp_path / "state", read_only=True) as store:
        keys = store.host_keys()
    assert keys["real1"]["how"] == "pinned" and keys["real1"]["fingerprint"].startswith("SHA256:")


# Records, at the first TCP connect to an internet address, whether asyncssh was imported,
# PyYAML, and the steps' loader (whether the steps had been loaded yet).
_FIRST_CONNECT_PROBE = r"""
import json, runpy, sys
seen = {}
out = sys.argv.pop(1)
def hook(event, args):
    if event == "socket.connect" and isinstance(args[1], tuple) and "asyncssh" not in seen:
        seen["asyncssh"] = "asyncssh" in sys.modules
        seen["yaml"] = "yaml" in sys.modules
        seen["loaded"] = "runbook.definition.loader" in sys.modules
        with open(out, "w") as f:
            json.dump(seen, f)
sys.addaudithook(hook)
sys.argv[0] = "runbook"
runpy.run_module("runbook", run_name="__main__", alter_sys=True)
"""


def _first_connect(tmp_path, steps, inv):
    import subprocess
    import sys

    mark = tmp_path / "first-connect.json"
    mark.unlink(missing_ok=True)  # each probe says what it saw, or the test fails
    # asyncio's own loop: uvloop's connects are libuv's, in C, and no audit hook sees
    # them; the connects made before asyncssh is imported (predial.py) are the
    # standard library's on either loop
    env = dict(
        os.environ, RUNBOOK_OPERATOR="tester", PYTHONPATH=str(REPO), HOME=str(tmp_path), RUNBOOK_UVLOOP="0"
    )
    args = ["run", "--step", "kernel", "--json", "--steps", str(steps), "--inventory", str(inv)]
    args += ["--state", str(tmp_path / "state"), "--new-run"]
    proc = subprocess.run(
        [sys.executable, "-c", _FIRST_CONNECT_PROBE, str(mark), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    assert hosts_of(proc)["kernel"]["status"] == "pass"
    return json.loads(mark.read_text())


def test_a_new_run_dials_before_asyncssh_is_imported_and_still_checks_the_host_key(tmp_path, sshd_server):
    """transport/predial.py: the first step's TCP connects start before asyncssh is
    imported; the handshake then runs over that socket against the real sshd, host
    key verified as ever. With a ~/.ssh/config (which may send the host elsewhere)
    nothing is dialled early."""
    known = tmp_path / "known_hosts"
    known.write_text(sshd_server.known_hosts_line())
    steps, inv = setup(tmp_path, sshd_server, known)
    # a site's first run lints its files, which reads known_hosts with asyncssh, and
    # parses them with PyYAML; the clean lint and the parsed files are remembered in
    # the state directory that run makes (workspace/lint_cache.py, load_cache.py), so
    # the next run does neither
    assert not (tmp_path / "state").exists()
    assert run(tmp_path, steps, inv, "--step", "kernel").returncode == 0
    assert _first_connect(tmp_path, steps, inv) == {"asyncssh": False, "yaml": False, "loaded": True}
    # that run remembered which addresses it dialled first (workspace/dial_plan.py): the
    # same command on the same files dials them before it loads the steps
    assert _first_connect(tmp_path, steps, inv) == {"asyncssh": False, "yaml": False, "loaded": False}

    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "config").write_text("Host unrelated\n  Port 2222\n")
    assert _first_connect(tmp_path, steps, inv) == {"asyncssh": True, "yaml": False, "loaded": True}
    assert _first_connect(tmp_path, steps, inv) == {"asyncssh": True, "yaml": False, "loaded": True}

    (tmp_path / ".ssh" / "config").unlink()
    sshd_server.new_host_key()  # reinstalled: the pre-dialled connection is refused like any other
    sshd_server.restart()
    proc = run(tmp_path, steps, inv, "--new-run")
    assert proc.returncode == 3, proc.stderr
    assert all("host key" in r["reason"] for r in hosts_of(proc).values())
