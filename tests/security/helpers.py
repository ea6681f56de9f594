"""The CLI as a subprocess of this interpreter, with this tree first on the path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

ONE_STEP = """\
phase: p
title: P
steps:
  - id: s
    title: S
    why: w
    hosts: all
    verify:
      run: {run}
      expect:
        - {{exit: 0}}
"""


def cli(*args: str, cwd: Path = REPO, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "runbook", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )


def project(tmp: Path, run: str = "echo hi", inventory: str = "all:\n  hosts:\n    n1:\n") -> list[str]:
    """A one-step runbook and an inventory in tmp; the CLI arguments naming them."""
    (tmp / "steps").mkdir(exist_ok=True)
    (tmp / "steps" / "10-p.yaml").write_text(ONE_STEP.format(run=run))
    (tmp / "inv.yaml").write_text(inventory)
    return ["--steps", str(tmp / "steps"), "--inventory", str(tmp / "inv.yaml")]
