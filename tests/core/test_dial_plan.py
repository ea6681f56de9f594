"""workspace/dial_plan.py: the addresses a `runbook run` dialled first, remembered per
command and files, read back only when this user wrote them, and another key as
soon as a step or inventory file or a choice on the command line changes."""

from __future__ import annotations

import json
import os
from argparse import Namespace

from runbook.workspace import dial_plan


def _site(tmp_path):
    steps = tmp_path / "steps"
    steps.mkdir()
    (steps / "10-a.yaml").write_text("phase: a\n")
    inv = tmp_path / "inventory"
    inv.mkdir()
    (inv / "hosts.yaml").write_text("all: {}\n")
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    return steps, inv, state


def _args(steps, inv, state, **kw):
    base = dict(
        steps=str(steps), inventory=str(inv), state=str(state), step=["s1"], phase=None,
        all=False, hosts=None, action="verify", max_handshakes=None,
    )  # fmt: skip
    return Namespace(**{**base, **kw})


def test_a_plan_is_recalled_for_the_same_command_and_files(tmp_path):
    steps, inv, state = _site(tmp_path)
    args = _args(steps, inv, state)
    key = dial_plan.plan_key(args)
    assert dial_plan.recall(state, key) == []
    plan = [("127.0.0.1", 22), ("fd00::7", 2222)]
    dial_plan.remember(state, key, plan)
    assert dial_plan.recall(state, dial_plan.plan_key(_args(steps, inv, state))) == plan
    d = state / dial_plan.DIR_NAME
    assert oct(d.stat().st_mode & 0o777) == "0o700"
    assert oct((d / key).stat().st_mode & 0o777) == "0o600"


def test_another_choice_or_a_changed_file_is_another_key(tmp_path):
    steps, inv, state = _site(tmp_path)
    key = dial_plan.plan_key(_args(steps, inv, state))
    for changed in (
        dict(step=["s2"]), dict(phase="p"), dict(all=True), dict(hosts="n[1-4]"),
        dict(action="apply"), dict(max_handshakes=8), dict(inventory=str(inv / "hosts.yaml")),
    ):  # fmt: skip
        assert dial_plan.plan_key(_args(steps, inv, state, **changed)) != key, changed
    (inv / "hosts.yaml").write_text("all: {hosts: {n1: {ansible_port: 2222}}}\n")
    assert dial_plan.plan_key(_args(steps, inv, state)) != key
    key = dial_plan.plan_key(_args(steps, inv, state))
    (inv / "group_vars").mkdir()
    (inv / "group_vars" / "all.yml").write_text("ansible_port: 22\n")
    assert dial_plan.plan_key(_args(steps, inv, state)) != key
    key = dial_plan.plan_key(_args(steps, inv, state))
    st = (steps / "10-a.yaml").stat()
    os.utime(steps / "10-a.yaml", ns=(st.st_atime_ns, st.st_mtime_ns + 1000))
    assert dial_plan.plan_key(_args(steps, inv, state)) != key


def test_only_a_plan_this_user_wrote_is_trusted(tmp_path):
    steps, inv, state = _site(tmp_path)
    key = dial_plan.plan_key(_args(steps, inv, state))
    dial_plan.remember(state, key, [("127.0.0.1", 22)])
    path = state / dial_plan.DIR_NAME / key
    path.chmod(0o666)  # writable by others
    assert dial_plan.recall(state, key) == []
    path.chmod(0o600)
    assert dial_plan.recall(state, key) == [("127.0.0.1", 22)]
    (state / dial_plan.DIR_NAME).chmod(0o755)  # a directory others may read
    assert dial_plan.recall(state, key) == []
    (state / dial_plan.DIR_NAME).chmod(0o700)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text(json.dumps({"key": key, "addresses": [["10.9.9.9", 22]]}))
    path.unlink()
    path.symlink_to(elsewhere)  # a link, even to a well-formed plan
    assert dial_plan.recall(state, key) == []


def test_a_damaged_plan_is_no_plan(tmp_path):
    steps, inv, state = _site(tmp_path)
    key = dial_plan.plan_key(_args(steps, inv, state))
    dial_plan.remember(state, key, [("127.0.0.1", 22)])
    path = state / dial_plan.DIR_NAME / key
    for bad in (
        "{", "[]", json.dumps({"key": "other", "addresses": [["127.0.0.1", 22]]}),
        json.dumps({"key": key, "addresses": [["127.0.0.1", "22"]]}),
        json.dumps({"key": key, "addresses": [["127.0.0.1", True]]}),
        json.dumps({"key": key, "addresses": [["127.0.0.1"]]}),
        json.dumps({"key": key, "addresses": "127.0.0.1"}),
    ):  # fmt: skip
        path.write_text(bad)
        assert dial_plan.recall(state, key) == [], bad


def test_nothing_is_written_without_a_state_directory_and_old_plans_go(tmp_path):
    steps, inv, state = _site(tmp_path)
    missing = tmp_path / "no-state"
    dial_plan.remember(missing, dial_plan.plan_key(_args(steps, inv, missing)), [("127.0.0.1", 22)])
    assert not missing.exists()
    keys = [dial_plan.plan_key(_args(steps, inv, state, step=[f"s{i}"])) for i in range(dial_plan._KEPT + 3)]
    for i, key in enumerate(keys):
        dial_plan.remember(state, key, [("127.0.0.1", 22)])
        os.utime(state / dial_plan.DIR_NAME / key, ns=(i * 10**9, i * 10**9))
    dial_plan.remember(state, keys[-1], [("127.0.0.1", 23)])  # a write prunes
    left = sorted(p.name for p in (state / dial_plan.DIR_NAME).iterdir())
    assert len(left) == dial_plan._KEPT
    assert keys[0] not in left and keys[-1] in left
