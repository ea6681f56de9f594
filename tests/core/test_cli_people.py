"""What a person reads from the CLI (issue 17, item 4): help on every option,
the closest step ids, runs as a table, parse output without Python reprs,
the site directory `runbook init` makes, and dependencies that earn their place."""

import argparse
import json
import os
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from runbook.cli.main import build_parser
from tests import fixtures_path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = fixtures_path.configured()
REPR = re.compile(r"[{\[]'[^']*':|\{'|\['|': \[|\bNone\b")  # {'a': ..., ['x', ...


def cli(*args, cwd=REPO, env=None):
    return subprocess.run(
        [sys.executable, "-m", "runbook", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env=dict(os.environ, PYTHONPATH=str(REPO), RUNBOOK_OPERATOR="tester", **(env or {})),
    )


def _subparsers(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


def test_every_option_of_every_command_has_help():
    missing = []
    for name, sub in _subparsers(build_parser()):
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if not (action.help or "").strip():
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert missing == []


@pytest.mark.parametrize("command", [("plan",), ("run",), ("note", "--reason", "x")])
def test_an_unknown_step_lists_the_closest_ids(tmp_path, command):
    args = (
        [command[0], "--step", "link-typ", *command[1:]]
        if command[0] != "note"
        else ["note", "link-typ", *command[1:], "--state", str(tmp_path / "state")]
    )
    p = cli(*args)
    assert p.returncode == 2, p.stderr
    assert "no step 'link-typ'" in p.stderr and "closest: link-type-ib" in p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "state").exists() or not any((tmp_path / "state").glob("2*"))  # no run made for it


def test_runs_says_when_there_are_none(tmp_path):
    p = cli("runs", "--state", str(tmp_path / "state"))
    assert p.returncode == 0
    assert p.stdout == "" and "no runs in" in p.stderr and "runbook run" in p.stderr


def test_runs_is_a_table_with_human_dates_and_json_on_request(tmp_path):
    state = tmp_path / "state"
    assert cli("note", "ssh-reachable", "--reason", "walked the racks", "--state", str(state)).returncode == 0
    table = cli("runs", "--state", str(state))
    assert table.returncode == 0, table.stderr
    run_id = next(state.glob("2*")).name
    assert run_id in table.stdout and "seed-dc" in table.stdout and "tester" in table.stdout
    assert re.search(r"today \d\d:\d\d", table.stdout), table.stdout  # not an epoch, not a repr
    assert "┃ run" in table.stdout and "{" not in table.stdout
    js = cli("runs", "--state", str(state), "--json")
    rows = [json.loads(line) for line in js.stdout.splitlines()]
    assert [r["run_id"] for r in rows] == [run_id] and abs(rows[0]["started"] - time.time()) < 120


def test_human_dates():
    from runbook.cli.human import human_time

    now = time.mktime((2026, 11, 30, 15, 0, 0, 0, 0, -1))
    assert human_time(now - 300, now) == "today 14:55 (5 min ago)"
    assert human_time(now - 5 * 3600, now) == "today 10:00"
    assert human_time(now - 86400, now) == "yesterday 15:00"
    assert human_time(now - 3 * 86400, now) == "Fri 27 Nov 15:00"
    assert human_time(now - 40 * 86400, now) == "2026-10-21 15:00"
    assert human_time(None, now) == "-"


def test_parse_prints_fields_and_values_never_a_python_repr():
    f = sorted((FIXTURES / "ibstat").glob("*.txt"))[0]
    p = cli("parse", "ibstat", str(f))
    assert p.returncode == 0, p.stderr
    assert re.search(r"cas\[0\]\.name\s+│\s+mlx\d_\d", p.stdout), p.stdout[:2000]
    assert not REPR.search(p.stdout), p.stdout[:2000]
    # the same record as JSON for scripts
    assert json.loads(cli("parse", "ibstat", str(f), "--json").stdout)["cas"][0]["name"]


def test_nested_values_read_as_key_value():
    from runbook.textfmt import kv_text

    before = {
        "restore": ["mlx5_0:LINK_TYPE_P1=2", "mlx5_3:LINK_TYPE_P1=2"],
        "ports": [{"dev": "mlx5_0", "up": True}],
        "note": None,
        "rate": 200.0,
    }
    text = kv_text(before)
    assert text == (
        "restore=mlx5_0:LINK_TYPE_P1=2,mlx5_3:LINK_TYPE_P1=2, ports[0].dev=mlx5_0, ports[0].up=yes, "
        "note=-, rate=200"
    )
    assert kv_text("IB(1)") == "IB(1)"


def test_init_makes_a_site_directory_that_lints(tmp_path):
    site = tmp_path / "acme-dc"
    p = cli("init", str(site), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert sorted(x.name for x in site.iterdir()) == [".gitignore", "README.md", "inventory", "steps"]
    assert sorted(x.name for x in (site / "steps").iterdir()) == sorted(
        x.name for x in (REPO / "steps").glob("*.yaml")
    )
    assert (site / "steps" / "30-nic-mode.yaml").read_text() == (
        REPO / "steps" / "30-nic-mode.yaml"
    ).read_text()
    assert "state/" in (site / ".gitignore").read_text().splitlines()
    assert "runbook lint" in (site / "README.md").read_text()
    inv = (site / "inventory" / "site.yaml").read_text()
    # every design variable of the example inventory is in the template, each with its comment
    lines = inv.splitlines()
    for var in sorted(_design_vars(REPO / "inventory" / "seed-cluster.yaml")):
        at = next((k for k, ln in enumerate(lines) if re.match(rf"\s+{var}:", ln)), None)
        assert at is not None, f"{var} missing from the template"
        assert "#" in lines[at] or lines[at - 1].strip().startswith("#"), f"{var} has no comment: {lines[at]}"
    # the new site directory is ready to work in: lint passes there with the defaults
    lint = cli("lint", cwd=site)
    assert lint.returncode == 0, lint.stderr
    # and nothing is overwritten
    again = cli("init", str(site), cwd=tmp_path)
    assert again.returncode == 2 and "already has steps" in again.stderr


def _design_vars(path):
    import yaml

    doc = yaml.safe_load(path.read_text())["all"]
    names = set(doc.get("vars") or {})
    for group in (doc.get("children") or {}).values():
        names |= set((group or {}).get("vars") or {})
        for host_vars in ((group or {}).get("hosts") or {}).values():
            names |= set(host_vars or {})
    return {n for n in names if not n.startswith("ansible_")}


def test_outside_a_site_directory_says_what_to_do(tmp_path):
    p = cli("lint", cwd=tmp_path)
    assert p.returncode == 2
    assert "runbook init DIR" in p.stderr and "Traceback" not in p.stderr


def test_every_declared_dependency_is_imported():
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    modules = {
        "textual": "textual",
        "asyncssh": "asyncssh",
        "rich": "rich",
        "pyyaml": "yaml",
        "tinydb": "tinydb",
        "clustershell": "ClusterShell",
        "orjson": "orjson",
        "uvloop": "uvloop",
    }
    source = "\n".join(p.read_text() for p in (REPO / "runbook").rglob("*.py"))
    for dep in deps:
        name = re.split(r"[\[<>=~ ]", dep, maxsplit=1)[0].lower()
        assert name in modules, f"{name}: declared, but no module known for it here"
        assert re.search(rf"^\s*(import|from) {modules[name]}\b", source, re.M), f"{name} is never imported"


def test_blocked_by_a_failing_prerequisite_says_how_to_fix_it():
    from runbook.cli.explain import explain

    def doc(need):
        return {
            "steps": [
                {
                    "id": "child",
                    "phase": "p",
                    "hosts": {
                        "n1": {"status": "blocked", "reason": f"needs {need}, which is fail on this host"},
                        "n2": {"status": "blocked", "reason": f"needs {need}, which is fail on this host"},
                    },
                }
            ]
        }

    [line] = explain(doc("link-type-ib"), {}, {"link-type-ib"})
    assert line == (
        "blocked: child on n[1-2] — needs link-type-ib, which fails on these hosts: fix it first "
        "(runbook run --step link-type-ib --action apply), or waive it"
    )
    [line] = explain(doc("ofed-version"), {}, {"link-type-ib"})  # no apply: a person fixes it
    assert "fix it first (by hand, then re-verify), or waive it" in line
