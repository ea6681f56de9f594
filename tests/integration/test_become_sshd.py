"""`ansible_become` against a real OpenSSH sshd: a host that says so runs its
commands through `sudo -n` as the become user, with a quoted value still one
argument; a host that does not runs them as the login user."""

import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml

from runbook.definition.template import TemplateError
from runbook.engine.become import wrap
from tests.sshd_server import sshd_server  # noqa: F401  (fixture)

from .conftest import REPO

STEPS = """\
phase: become
title: Privileges
steps:
  - id: who
    title: commands run as the become user
    why: a step that needs root must get root when the login user is not
    hosts: all
    verify:
      run: id -un
      expect:
        - {matches: '^nobody$'}
  - id: quoted
    title: a value with quotes and a semicolon stays one argument under sudo
    why: the value is quoted for the shell once, then the whole command once more for sh -c
    hosts: all
    verify:
      run: printf '<%s>' {{ word }} $(id -un)
      expect:
        - {contains: "<a b'c\\"; id -un><nobody>"}
"""


@pytest.mark.skipif(shutil.which("sudo") is None, reason="sudo is not installed (.ci/run installs it)")
def test_become_runs_through_sudo_on_a_real_sshd(tmp_path, sshd_server):
    steps = tmp_path / "steps"
    steps.mkdir()
    (steps / "10-become.yaml").write_text(STEPS)
    known = tmp_path / "known_hosts"
    known.write_text(sshd_server.known_hosts_line())
    login = {
        "ansible_host": "127.0.0.1",
        "ansible_port": sshd_server.port,
        "ansible_user": sshd_server.user,
        "ansible_ssh_private_key_file": str(sshd_server.client_key),
    }
    inv = tmp_path / "inventory.yaml"
    inv.write_text(
        yaml.safe_dump(
            {
                "all": {
                    "vars": {"runbook_known_hosts": str(known), "word": "a b'c\"; id -un"},
                    "hosts": {
                        "viasudo": {**login, "ansible_become": "yes", "ansible_become_user": "nobody"},
                        "plain": login,
                    },
                }
            }
        )
    )
    env = dict(os.environ, RUNBOOK_OPERATOR="tester", PYTHONPATH=str(REPO), HOME=str(tmp_path))
    p = subprocess.run(
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
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 1, p.stderr  # the host without become fails: it is not nobody
    steps_doc = {s["id"]: s for s in json.loads(p.stdout)["steps"]}
    assert steps_doc["who"]["hosts"]["viasudo"]["status"] == "pass", steps_doc["who"]
    assert steps_doc["who"]["failing"] == "plain"
    assert steps_doc["quoted"]["hosts"]["viasudo"]["status"] == "pass", steps_doc["quoted"]
    assert steps_doc["quoted"]["failing"] == "plain"


def test_the_wrapped_command_quotes_the_whole_command_once():
    assert wrap("id -un", {}) == "id -un"
    assert wrap("id -un", {"ansible_become": "no"}) == "id -un"
    assert (
        wrap("echo 'a b' | wc -l", {"ansible_become": True})
        == "sudo -n -u root -- /bin/sh -c 'echo '\"'\"'a b'\"'\"' | wc -l'"
    )
    assert (
        wrap("x", {"ansible_become": "True", "ansible_become_user": "a b"})
        == "sudo -n -u 'a b' -- /bin/sh -c x"
    )
    with pytest.raises(TemplateError, match="sudo only"):
        wrap("x", {"ansible_become": True, "ansible_become_method": "su"})
    with pytest.raises(TemplateError, match="not a boolean"):
        wrap("x", {"ansible_become": "maybe"})
