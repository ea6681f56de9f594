"""Item 4 of issue 16: every number on the command line is finite and in range
(exit 2 and a message, never a traceback); an output that cannot be written is
one line and exit 2; host ranges and YAML aliases are bounded."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from runbook.errors import InputError
from runbook.inventory.hostpattern import HostPatternError, expand_ranges
from runbook.inventory.load import load_inventory, select_hosts
from runbook.yamlsafe import MAX_EXPANDED_NODES, load_text

from ..export.snapshot_builder import small_snapshot
from .helpers import cli, project


@pytest.mark.parametrize("value", ["inf", "nan", "1e308", "-1", "0", "-inf", "lots"])
def test_waive_expires_days_refused(tmp_path: Path, value: str) -> None:
    p = cli(
        "waive",
        "s",
        "--reason",
        "r",
        f"--expires-days={value}",
        "--state",
        str(tmp_path / "state"),
        *project(tmp_path),
    )
    assert p.returncode == 2, p.stderr
    assert "--expires-days" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "state").exists()  # refused before a run was created


def test_waive_expires_days_in_range_is_recorded(tmp_path: Path) -> None:
    state = tmp_path / "state"
    p = cli("waive", "s", "--reason", "r", "--expires-days", "2.5", "--state", str(state), *project(tmp_path))
    assert p.returncode == 0, p.stderr
    journal = next(state.glob("*/journal.jsonl")).read_text()
    assert '"kind":"waive"' in journal.replace(" ", "")


@pytest.mark.parametrize("value", ["-5", "0", "1025", "1.5", "x"])
def test_max_handshakes_refused(tmp_path: Path, value: str) -> None:
    p = cli(
        "run", "--all", f"--max-handshakes={value}", "--state", str(tmp_path / "state"), *project(tmp_path)
    )
    assert p.returncode == 2 and "--max-handshakes" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize("value", ["-1", "11", "1.5", "x"])
def test_verify_retries_refused(tmp_path: Path, value: str) -> None:
    p = cli(
        "run", "--all", f"--verify-retries={value}", "--state", str(tmp_path / "state"), *project(tmp_path)
    )
    assert p.returncode == 2 and "--verify-retries" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["demo", "--nodes", "0"],
        ["demo", "--nodes", "99999999"],
        ["sim", "--port", "70000"],
        ["sim", "--lifetime", "nan"],
        ["sim", "--reboot-seconds", "-1"],
        ["sim", "--nodes", "-3"],
        ["sim", "--drop-commands", "-1"],
        ["sim", "--drop-every", "0"],
        ["sim", "--stall-handshakes", "x"],
    ],
)
def test_sim_numbers_refused(tmp_path: Path, args: list[str]) -> None:
    p = cli(*args, "--dir", str(tmp_path / "lab"), timeout=60)
    assert p.returncode == 2 and "Traceback" not in p.stderr and "argument --" in p.stderr
    assert not (tmp_path / "lab").exists()


def test_export_into_an_unwritable_place_is_one_line(tmp_path: Path) -> None:
    snap = tmp_path / "snap.json"
    snap.write_text(json.dumps(small_snapshot()))
    key = tmp_path / "k"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True, timeout=60)
    # root writes into a chmod-555 directory, so use places nobody can write:
    # a path under a regular file, and sysfs
    for out in (snap / "log.json", Path("/sys/runbook-test/log.json")):
        p = cli("export", "--snapshot", str(snap), "--sign-key", str(key), "-o", str(out))
        assert p.returncode == 2, p.stderr
        assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1
        assert p.stderr.startswith(f"runbook export: cannot write the log {out}: ")


def test_host_range_is_bounded() -> None:
    t = time.monotonic()
    with pytest.raises(HostPatternError, match="more than 100000 names"):
        expand_ranges("gpu[0:99999999]")
    with pytest.raises(HostPatternError, match="more than 100000 names"):
        expand_ranges("r[0:999]n[0:999]")  # 10^6 from two small ranges
    assert time.monotonic() - t < 1
    assert len(expand_ranges("gpu[001:100]")) == 100


def test_host_range_in_inventory_and_selection_is_refused_with_file_line(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text("all:\n  hosts:\n    n1:\n    gpu[0:99999999]:\n")
    with pytest.raises(InputError) as info:
        load_inventory(inv)
    assert str(info.value).startswith(f"{inv}:4: host 'gpu[0:99999999]'")
    inv.write_text("all:\n  hosts:\n    n1:\n")
    with pytest.raises(ValueError, match="more than the 100000"):
        select_hosts(load_inventory(inv), "gpu[0-99999999]")


def test_host_name_with_a_comma_is_refused(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text("all:\n  hosts:\n    gpu03:\n    gpu04,gpu05:\n")
    with pytest.raises(InputError) as info:
        load_inventory(inv)
    assert f"{inv}:4: host 'gpu04,gpu05': a host name cannot contain a comma" in str(info.value)


def _bomb(levels: int) -> str:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    prev = "a"
    for n in "bcdefghijk"[:levels]:
        lines.append(f"{n}: &{n} [" + ", ".join([f"*{prev}"] * 9) + "]")
        prev = n
    return "\n".join(lines) + "\n"


def test_yaml_alias_bomb_is_refused_with_file_line(tmp_path: Path) -> None:
    t = time.monotonic()
    with pytest.raises(InputError) as info:
        load_text(_bomb(9), "steps/10-bomb.yaml")
    assert time.monotonic() - t < 2
    assert str(info.value).startswith("steps/10-bomb.yaml:7: YAML: aliases expand this value")
    assert str(MAX_EXPANDED_NODES) in str(info.value)
    assert load_text(_bomb(3))["d"][0][0][0] == ["x"] * 9  # ordinary aliases still work
    # the CLI says the same for a step file, exit 2
    steps = tmp_path / "steps"
    steps.mkdir()
    (steps / "10-bomb.yaml").write_text(_bomb(9))
    (tmp_path / "inv.yaml").write_text("all:\n  hosts:\n    n1:\n")
    p = cli("lint", "--steps", str(steps), "--inventory", str(tmp_path / "inv.yaml"))
    assert p.returncode == 2 and f"{steps / '10-bomb.yaml'}:7: YAML: aliases" in p.stderr


@pytest.mark.parametrize(
    "text", ["[" * 100000, "{a: " * 50000, "- " * 20000 + "x"], ids=["flow-seq", "flow-map", "block"]
)
def test_yaml_nested_too_deeply_is_an_error_not_a_crash(text: str, tmp_path: Path) -> None:
    f = tmp_path / "deep.yaml"
    f.write_text(text)
    p = cli("inventory", "--inventory", str(f))
    assert p.returncode == 2 and "nested too deeply" in p.stderr and "Traceback" not in p.stderr


def test_only_a_text_that_could_nest_too_deeply_is_scanned_for_its_depth(monkeypatch) -> None:
    """runbook/yaml_parse.py scans a text's flow nesting (libyaml would recurse in C on
    a deep one) only when it has more `[` and `{` than the limit: fewer cannot nest
    deeper. Both kinds of text still parse the same."""
    from runbook import yaml_parse

    scanned = []
    real = yaml_parse._flow_depth
    monkeypatch.setattr(yaml_parse, "_flow_depth", lambda text: scanned.append(text) or real(text))
    assert yaml_parse.parse("a: [1, {b: [2]}]\n", "f.yaml") == {"a": [1, {"b": [2]}]}
    assert scanned == []
    many = "- [1]\n" * (yaml_parse._MAX_C_FLOW_DEPTH + 1)  # many openers, none nested
    assert yaml_parse.parse(many, "g.yaml") == [[1]] * (yaml_parse._MAX_C_FLOW_DEPTH + 1)
    assert scanned == [many]
