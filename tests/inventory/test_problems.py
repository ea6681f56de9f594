"""Bad inventories: every problem found, each as FILE:LINE: message, no traceback."""

from __future__ import annotations

import textwrap

import pytest

from runbook.errors import InputError
from runbook.inventory.load import load_inventory


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def problems(path) -> list[str]:
    with pytest.raises(InputError) as info:
        load_inventory(path)
    return [str(p) for p in info.value.problems]


def test_every_problem_of_a_file_is_reported_with_its_line(tmp_path):
    f = write(
        tmp_path / "bad.yaml",
        """
        all:
          children:
            compute:
              hosts:
                gpu[01-48]:
                gpu[10:1]:
                gpu50: just-a-string
                1234:
              vars: [a, b]
              host:
                gpu01:
            prio:
              vars:
                ansible_group_priority: high
            listgroup: [a, b]
            compute2:
              hosts: [gpu01]
            sm01:
              hosts:
                sm01:
        """,
    )
    assert problems(f) == [
        f"{f}:5: host 'gpu[01-48]': host range must be begin:end or begin:end:step, found [01-48]"
        " (Ansible ranges use ':', e.g. gpu[01:48])",
        f"{f}:6: host 'gpu[10:1]': host range must have begin <= end, found [10:1]",
        f"{f}:7: host 'gpu50' must be a mapping of variables, found a string",
        f"{f}:8: host 1234 must be a string (quote numbers)",
        f"{f}:9: 'vars' of group 'compute' must be a mapping, found a list",
        f"{f}:10: unknown key 'host' in group 'compute' (a group has only hosts, children and vars)",
        f"{f}:14: ansible_group_priority must be an integer, found 'high'",
        f"{f}:15: group 'listgroup' must be a mapping with hosts/children/vars, found a list",
        f"{f}:17: 'hosts' of group 'compute2' must be a mapping, found a list",
        f"{f}:20: 'sm01' is both a group and a host: rename one",
    ]


def test_group_cycles(tmp_path):
    f = write(
        tmp_path / "loops.yaml",
        """
        all:
          children:
            loopa:
              children:
                loopb:
                  children:
                    loopa:
            self:
              children:
                self:
        outer:
          children:
            all:
        """,
    )
    assert problems(f) == [
        f"{f}:5: group cycle loopa -> loopb -> loopa: a group cannot be its own ancestor",
        f"{f}:10: group 'self' lists itself as a child",
        f"{f}:11: group cycle all -> outer -> all: a group cannot be its own ancestor",
    ]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("", None, "empty inventory file"),
        ("# only a comment\n", None, "empty inventory file"),
        ("- a\n- b\n", 1, "expected a mapping of groups, found a list"),
        ("plugin: constructed\n", 1, "inventory plugin configuration is not supported"),
        ("all:\n  hosts:\n    a:\n    a:\n", 4, "YAML: duplicate key 'a' (first at line 3)"),
        ("all:\n  hosts: [\n", 3, "YAML:"),
        ("all:\n  vars:\n    secret: !vault |\n      abc\n", 3, "YAML:"),
    ],
)
def test_file_level_problems(tmp_path, text, line, message):
    f = tmp_path / "inv.yaml"
    f.write_text(text, encoding="utf-8")
    [found] = problems(f)
    where = f"{f}:{line}" if line else f"{f}"
    assert found.startswith(f"{where}: ") and message in found, found


def test_problems_of_every_file_in_a_directory(tmp_path):
    a = write(tmp_path / "inv" / "a.yaml", "all:\n  hosts:\n    x: 1\n")
    write(tmp_path / "inv" / "b.yaml", "all:\n  hosts:\n    ok:\n")
    c = write(tmp_path / "inv" / "c.yml", "grp:\n  childs: {}\n")
    assert problems(tmp_path / "inv") == [
        f"{a}:3: host 'x' must be a mapping of variables, found a number",
        f"{c}:2: unknown key 'childs' in group 'grp' (a group has only hosts, children and vars)",
    ]


def test_bad_vars_files_reported_with_the_inventory_problems(tmp_path):
    inv = write(tmp_path / "inv.yaml", "compute:\n  hosts:\n    n1:\n  var: {}\n")
    gv = write(tmp_path / "group_vars" / "compute.yml", "- not\n- a mapping\n")
    hv = write(tmp_path / "host_vars" / "n1.yml", "a: 1\na: 2\n")
    assert problems(inv) == [
        f"{inv}:4: unknown key 'var' in group 'compute' (a group has only hosts, children and vars)",
        f"{gv}:1: a vars file must be a mapping of variable names to values",
        f"{hv}:2: YAML: duplicate key 'a' (first at line 1)",
    ]


def test_symlink_loop_in_an_inventory_directory(tmp_path):
    write(tmp_path / "inv" / "a.yaml", "all:\n  hosts:\n    x:\n")
    (tmp_path / "inv" / "loop").symlink_to(tmp_path / "inv")
    assert list(load_inventory(tmp_path / "inv").hosts) == ["x"]


def test_missing_path_and_directory_without_yaml(tmp_path):
    assert problems(tmp_path / "nope.yaml") == [
        f"{tmp_path / 'nope.yaml'}: no such inventory file or directory"
    ]
    write(tmp_path / "d" / "README.md", "hello\n")
    assert problems(tmp_path / "d") == [
        f"{tmp_path / 'd'}: no YAML inventory file (.yaml, .yml) in this directory"
    ]


def test_not_utf8(tmp_path):
    f = tmp_path / "inv.yaml"
    f.write_bytes(b"all:\n  vars:\n    x: \xff\n")
    [found] = problems(f)
    assert found.startswith(f"{f}: not UTF-8 text")
