"""`runbook run` as a program ends without the interpreter's teardown (cli/main.py
_leave_now), but only after what an exit must do: atexit handlers run, stdout and
stderr flushed (a pipe gets everything), the exit code kept. In-process callers of
main(argv) get the code back as before."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from runbook.cli.main import main

REPO = Path(__file__).resolve().parents[2]

_PROGRAM = r"""
import atexit, sys
atexit.register(lambda: print("atexit handler ran", file=sys.stderr))
class Torn:
    def __del__(self):
        print("torn down", file=sys.stderr)
kept = Torn()  # freed by the interpreter's teardown only
print("x" * 200000)  # more than a pipe buffer, still in stdout's buffer at exit
from runbook.cli.main import main
sys.argv[0] = "runbook"  # the program name in messages
sys.exit(main())
"""


def _args(tmp_path):
    return ["run", "--steps", str(REPO / "steps"), "--inventory", str(REPO / "inventory"),
            "--state", str(tmp_path / "s")]  # fmt: skip


def test_program_exit_runs_atexit_and_flushes(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [sys.executable, "-c", _PROGRAM, *_args(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2  # no --step: the usage error's code
    assert "say what to run" in proc.stderr and "atexit handler ran" in proc.stderr
    assert "torn down" not in proc.stderr  # the teardown was skipped
    assert proc.stdout == "x" * 200000 + "\n"


def test_in_process_main_returns(tmp_path, capsys):
    assert main(_args(tmp_path)) == 2
    assert "say what to run" in capsys.readouterr().err
