"""Item 3 of issue 16: a value that is invalid at run time (templated regex,
number, version range) makes that host unknown with the reason and the run goes
on; lint catches statically what it can."""

from __future__ import annotations

from pathlib import Path

import pytest

from runbook.criteria.host import judge_host
from runbook.definition.loader import load_runbook
from runbook.definition.model import Status
from runbook.definition.targets import ordered
from runbook.engine.runner import Engine
from runbook.errors import InputError
from runbook.inventory.load import load_inventory
from runbook.run.state import RunState

from ..engine.fakes import FakeHost, FakeTransport
from .helpers import cli

STEPS = """\
phase: p
title: P
steps:
  - id: ver
    title: version
    why: w
    hosts: all
    verify:
      run: version
      expect:
        - {matches: '{{ pattern }}'}
  - id: later
    title: later
    why: w
    hosts: all
    verify:
      run: version
      expect:
        - {contains: '23'}
"""

INVENTORY = """\
all:
  vars:
    pattern: '23'
  hosts:
    n1:
    n2:
      pattern: '[z-a]'
    n3:
"""


async def test_regex_characters_in_a_templated_value_are_literal_and_the_run_goes_on(tmp_path: Path) -> None:
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "10-p.yaml").write_text(STEPS)
    (tmp_path / "inv.yaml").write_text(INVENTORY)
    rb, inv = load_runbook(tmp_path / "steps"), load_inventory(tmp_path / "inv.yaml")
    state = RunState()
    engine = Engine(rb, inv, FakeTransport({h: FakeHost() for h in inv.hosts}), state)
    async for _ in engine.run(ordered(rb), "verify"):
        pass
    assert state.status("ver", "n1") == Status.PASS and state.status("ver", "n3") == Status.PASS
    # an inventory value inside `matches` is matched literally (criteria/host.py escapes
    # substituted values), so '[z-a]' is no broken regex: it is text that is not there
    assert state.status("ver", "n2") == Status.FAIL
    assert "no match" in state.reason("ver", "n2") and r"\[z\-a\]" in state.reason("ver", "n2")
    assert {state.status("later", h) for h in inv.hosts} == {Status.PASS}  # the run went on
    assert not any(o.status == Status.INTERRUPTED for o in state.outcomes.values())


def _action(tmp_path: Path, expect: str):
    (tmp_path / "10-a.yaml").write_text(
        "phase: a\ntitle: A\nsteps:\n  - id: s\n    title: S\n    why: w\n    hosts: all\n"
        f"    verify:\n      run: x\n      parse: ibstat\n      expect:\n        - {expect}\n"
    )
    return load_runbook(tmp_path).steps[0].verify


@pytest.mark.parametrize(
    "expect,variables,why",
    [
        ("{path: ports, semver: '{{ v }}'}", {"v": ">>1"}, "bad version range"),
        ("{path: ports, ge: '{{ v }}'}", {"v": "fast"}, "needs numbers"),
        ("{path: ports, matches: '{{ v }}'}", {"v": "(unclosed"}, "invalid regular expression"),
        ("{path: ports, reference: '{{ v }}'}", {"v": 0}, "the reference is 0"),
        ("{path: ports, reference: '{{ v }}'}", {"v": "nan"}, "needs numbers"),
    ],
)
def test_runtime_invalid_values_give_unknown(tmp_path: Path, expect: str, variables: dict, why: str) -> None:
    action = _action(tmp_path, expect)
    v = judge_host(action, 0, "", variables, {"ports": "5"})
    assert v.status == Status.UNKNOWN and why in v.reason, v.reason


@pytest.mark.parametrize(
    "expect,message",
    [
        ("{path: ports, semver: '>>1'}", "bad version range '>>1'"),
        ("{path: ports, ge: .nan}", "ge expects a finite number"),
        ("{path: ports, lt: .inf}", "lt expects a finite number"),
        ("{path: ports, reference: fast}", "reference must be a number"),
        ("{path: ports, reference: 10, lower: .nan}", "lower must be a number"),
        ("{contains: '{{ unterminated'}", "malformed placeholder '{{ unterminated'"),
    ],
)
def test_lint_catches_statically(tmp_path: Path, expect: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        _action(tmp_path, expect)
    assert f"{tmp_path / '10-a.yaml'}:" in str(info.value) and message in str(info.value)


@pytest.mark.parametrize("timeout", [".nan", ".inf", "-1", "1e9"])
def test_lint_refuses_a_timeout_that_is_not_finite(tmp_path: Path, timeout: str) -> None:
    (tmp_path / "10-a.yaml").write_text(
        "phase: a\ntitle: A\nsteps:\n  - id: s\n    title: S\n    why: w\n    hosts: all\n"
        f"    verify:\n      run: echo {{{{ x\n      timeout: {timeout}\n"
    )
    with pytest.raises(InputError) as info:
        load_runbook(tmp_path)
    text = str(info.value)
    assert f"{tmp_path / '10-a.yaml'}:10: step s: verify.timeout must be a number of seconds" in text
    assert "malformed placeholder '{{ x'" in text


@pytest.mark.parametrize("port", ["notaport", "99999", "0", "-22", "true"])
def test_lint_refuses_a_bad_ansible_port(tmp_path: Path, port: str) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text(f"all:\n  hosts:\n    n1:\n      ansible_host: 127.0.0.1\n      ansible_port: {port}\n")
    p = cli("inventory", "--inventory", str(inv))
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert f"{inv}:5: host 'n1': ansible_port must be a port number 1-65535" in p.stderr
