"""The plan a person reads (text and Markdown) shows the inventory's values
everywhere, the pairs' server command included: no `{{ }}` reaches them
(issue 17, item 5)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("fmt", ["text", "md"])
def test_the_plan_for_people_has_no_template_left(fmt):
    p = subprocess.run(
        [sys.executable, "-m", "runbook", "plan", "--format", fmt],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    assert p.returncode == 0, p.stderr
    left = [line.strip()[:160] for line in p.stdout.splitlines() if "{{" in line]
    assert left == []
    if fmt == "text":
        assert "server: stdbuf -oL ib_write_bw -d mlx5_0 -p 18516 -s 65536" in p.stdout
