import os
import subprocess
import sys
from pathlib import Path

import pytest

from runbook.sim.procs import SimProcess, random_base
from runbook.sim.scenario import DEFAULT

REPO = Path(__file__).resolve().parents[2]


def runbook_cli(
    *args: str,
    state: Path,
    inventory: Path,
    timeout: float = 300,
    check_rc=None,
    steps: Path = REPO / "steps",
):
    """Run the real CLI in a subprocess, as a field engineer would."""
    env = dict(os.environ, RUNBOOK_OPERATOR="tester", PYTHONPATH=str(REPO))
    cmd = [
        sys.executable,
        "-m",
        "runbook",
        *args,
        "--state",
        str(state),
        "--inventory",
        str(inventory),
        "--steps",
        str(steps),
    ]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO, stdin=subprocess.DEVNULL
    )
    if check_rc is not None:
        assert proc.returncode == check_rc, proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def demo_lab(tmp_path_factory):
    """The 48-node lab with the shipped demo scenario, in its own process."""
    lab = SimProcess(
        tmp_path_factory.mktemp("lab"),
        nodes=48,
        scenario=DEFAULT,
        base_address=random_base(),
        port=0,
        lifetime=900,
        reboot_seconds=1.0,
        slow_seconds=3.0,
    )
    lab.start()
    yield lab
    lab.stop()
