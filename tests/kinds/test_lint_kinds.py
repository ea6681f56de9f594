"""The step kinds are checked when the steps are read (FILE:LINE: what is
wrong, exit status 2 from `runbook lint`) and against the inventory."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from runbook.definition.lint import lint
from runbook.definition.loader import load_runbook
from runbook.errors import InputError
from runbook.inventory.load import load_inventory
from tests.steps.helpers import REPO

HEAD = """\
phase: p
title: P
steps:
"""


def step(body: str) -> str:
    return HEAD + textwrap.indent(textwrap.dedent(body), "  ")


def one(extra: str, sid: str = "s") -> str:
    """A step `sid` with the lines of `extra` as its own keys."""
    return BASE.replace("id: s", f"id: {sid}") + textwrap.indent(extra, "  ")


def problems(tmp_path, text: str) -> list[str]:
    (tmp_path / "steps").mkdir(exist_ok=True)
    (tmp_path / "steps" / "10-p.yaml").write_text(text)
    with pytest.raises(InputError) as exc:
        load_runbook(tmp_path / "steps")
    return [f"{p.line}: {p.message}" for p in exc.value.problems]


BASE = """\
- id: s
  title: t
  why: w
  hosts: compute
"""


@pytest.mark.parametrize(
    "extra, line, expected",
    [
        ("run_on: many\nverify: {run: x}\n", 8, "run_on must be `one`"),
        ("run_on: one\njudge_each: [a]\nverify: {run: x}\n", 9, "judge_each must be a mapping"),
        ("run_on: one\njudge_each: {items: errors, hosts: []}\nverify: {run: x}\n", 9, "judge_each.hosts"),
        (
            "run_on: one\njudge_each: {items: e, hosts: [n], unseen: pass}\nverify: {run: x}\n",
            9,
            "needs `covered:`",
        ),
        ("pairs: {plan: star, server: s, ready: r}\nverify: {run: x}\n", 8, "plan must be one of rail"),
        ("pairs: {plan: rail, server: s}\nverify: {run: x}\n", 8, "ready must be what the server prints"),
        ("pairs: {plan: rail, server: s, ready: '('}\nverify: {run: x}\n", 8, "not a regular expression"),
        (
            "pairs: {plan: list, server: s, ready: r, list: [[a]]}\nverify: {run: x}\n",
            8,
            "[client, server] host pairs",
        ),
        (
            "pairs: {plan: list, server: s, ready: r, list: [[a, a]]}\nverify: {run: x}\n",
            8,
            "two different hosts",
        ),
        (
            "pairs: {plan: rail, server: s, ready: r, concurrency: 0}\nverify: {run: x}\n",
            8,
            "concurrency must be",
        ),
        (
            "pairs: {plan: rail, server: s, ready: r, cross_leaf: 0}\nverify: {run: x}\n",
            8,
            "cross_leaf must be a whole number",
        ),
        (
            "pairs: {plan: rail, server: s, ready: r, cross_leaf: many}\nverify: {run: x}\n",
            8,
            "cross_leaf must be a whole number",
        ),
        ("launch: {split: true}\nverify: {run: x}\n", 8, "launcher must be a host selector"),
        (
            "launch: {launcher: a}\npairs: {plan: rail, server: s, ready: r}\nverify: {run: x}\n",
            8,
            "pairs and launch exclude each other",
        ),
        (
            "launch: {launcher: a}\nverify: {run: x}\napply: {run: y}\nrollback: {run: z}\n",
            8,
            "verifies only",
        ),
        ("run_from: sm\nverify: {run: x}\n", 8, "run_from is only read with run_on: one"),
        # the quoting rule of every `run:` holds for a pair's server and cleanup too
        (
            "pairs: {plan: rail, server: \"ib_write_bw -d '{{ nic.dev }}'\", ready: r}\nverify: {run: x}\n",
            8,
            "pairs.server: {{ nic.dev }} is",
        ),
        (
            "pairs: {plan: rail, server: s, ready: r, cleanup: 'fuser -k \"{{ port }}/tcp\"'}\nverify: {run: x}\n",
            8,
            "pairs.cleanup: {{ port }} is",
        ),
    ],
)
def test_bad_kind_is_named_with_its_line(tmp_path, extra, line, expected):
    found = problems(tmp_path, step(one(extra)))
    assert any(p.startswith(f"{line}:") and expected in p for p in found), found


INVENTORY = """\
all:
  children:
    compute:
      hosts:
        n[1:4]:
"""


def test_lint_with_the_inventory(tmp_path):
    (tmp_path / "inv.yaml").write_text(INVENTORY)
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "10-p.yaml").write_text(
        step(
            one("""\
pairs: {plan: rail, server: 'srv {{ nic.dev }} {{ port }}', ready: r, cleanup: 'k {{ nope }}'}
verify: {run: 'cli {{ peer.name }}'}
""")
            + one(
                """\
launch: {launcher: nosuchgroup}
verify: {run: 'job {{ launch_hosts }}'}
""",
                "l",
            )
            + one(
                """\
pairs: {plan: list, server: s, ready: r, list: [[n1, n9]]}
verify: {run: c}
""",
                "x",
            )
        )
    )
    found = [p.message for p in lint(load_runbook(tmp_path / "steps"), load_inventory(tmp_path / "inv.yaml"))]
    assert any("pairs plan rail needs `compute_nics`" in m for m in found), found
    assert any("pairs.cleanup uses {{ nope }}" in m for m in found), found
    assert not any(
        "nic.dev" in m or "peer.name" in m or "launch_hosts" in m or "port" in m.split("uses")[-1]
        for m in found
    ), found  # the kinds' own variables are known
    assert any("launch.launcher 'nosuchgroup'" in m for m in found), found
    assert any("pairs.list names n9" in m for m in found), found


def test_runbook_lint_exit_2_and_file_line(tmp_path):
    (tmp_path / "steps").mkdir()
    bad = tmp_path / "steps" / "10-p.yaml"
    bad.write_text(step(one("pairs: {plan: star, server: s, ready: r}\nverify: {run: x}\n")))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "runbook",
            "lint",
            "--steps",
            str(tmp_path / "steps"),
            "--inventory",
            str(REPO / "inventory" / "seed-cluster.yaml"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert p.returncode == 2, p.stderr
    assert f"{bad}:8:" in p.stderr and "Traceback" not in p.stderr


def test_plan_shows_what_each_kind_runs_where():
    from runbook.definition.plan import build_plan
    from tests.steps.helpers import inventory, runbook

    plan = build_plan(runbook(), inventory(), step_ids=["fabric-health", "ib-pair-bw", "nccl-inter-node"])
    steps = {s["id"]: s for p in plan["phases"] for s in p["steps"]}
    assert steps["fabric-health"]["kind"].startswith("run_on: one (the first reachable of sm[01-02])")
    assert [c["hosts"] for c in steps["fabric-health"]["verify"]["commands"]] == ["sm01"]
    assert steps["nccl-inter-node"]["kind"].startswith("launch: one job from gpu01")
    [job] = steps["nccl-inter-node"]["verify"]["commands"]
    assert job["hosts"] == "gpu01" and "for h in gpu01 gpu02" in job["command"]
    assert steps["ib-pair-bw"]["kind"].startswith("pairs: rail plan")
    for c in steps["ib-pair-bw"]["verify"]["commands"]:
        assert "cannot build" not in c["command"] and "-p 18516" in c["command"]


SITE = """\
all:
  children:
    compute:
      hosts:
        n[1:2]:
    sm:
      hosts: {}
    spare:
"""


@pytest.mark.parametrize(
    "selector, extra, expected",
    [
        # the site declares the group with no host (SMs on a switch): no target, no problem
        ("sm", "", None),
        ("@sm", "", None),
        ("sm,spare", "", None),
        # run_from an empty group: the step's own hosts run it
        ("compute", "run_on: one\nrun_from: sm\n", None),
        # a selection of groups that have hosts, selecting nothing: still a mistake
        ("compute&sm", "", "hosts 'compute&sm' selects no host"),
        ("compute!n[1-2]", "", "selects no host"),
        ("nosuchgroup", "", "no such group or host: nosuchgroup"),
        ("compute", "run_on: one\nrun_from: compute&sm\n", "run_from 'compute&sm' selects no host"),
    ],
)
def test_a_group_the_inventory_declares_empty_is_no_lint_problem(tmp_path, selector, extra, expected):
    (tmp_path / "inv.yaml").write_text(SITE)
    (tmp_path / "steps").mkdir()
    body = one(extra + "verify: {run: x}\n").replace("hosts: compute", f"hosts: '{selector}'")
    (tmp_path / "steps" / "10-p.yaml").write_text(step(body))
    found = [p.message for p in lint(load_runbook(tmp_path / "steps"), load_inventory(tmp_path / "inv.yaml"))]
    if expected is None:
        assert found == []
    else:
        assert len(found) == 1 and expected in found[0], found
