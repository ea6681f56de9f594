"""A clean lint is remembered under the state directory, keyed by the hashes of the
step and inventory files: the same files skip lint, any changed byte lints again,
a problem is never remembered and a cache entry that does not match is ignored."""

import os
import textwrap

import pytest

from runbook.errors import InputError
from runbook.workspace import lint_cache, project

STEPS = """\
phase: software
title: Software
steps:
  - id: ofed-version
    title: OFED version
    why: every node must run the same OFED.
    hosts: compute
    verify:
      run: ofed_info -s
      parse: ofed_info
"""

INVENTORY = """\
all:
  children:
    compute:
      hosts:
        gpu001: {ansible_host: 127.0.0.1}
"""


@pytest.fixture
def site(tmp_path, monkeypatch):
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "10-software.yaml").write_text(STEPS)
    (tmp_path / "inventory.yaml").write_text(textwrap.dedent(INVENTORY))
    (tmp_path / "state").mkdir()
    calls = []
    real = project.lint

    def counting(runbook, inv):
        calls.append(1)
        return real(runbook, inv)

    monkeypatch.setattr(project, "lint", counting)
    return tmp_path, calls


def load(site_dir, state=True):
    return project.load_project(
        site_dir / "steps", site_dir / "inventory.yaml", state=site_dir / "state" if state else None
    )


def test_same_files_lint_once(site):
    site_dir, calls = site
    load(site_dir)
    load(site_dir)
    assert len(calls) == 1
    files = sorted(p.name for p in (site_dir / "state" / lint_cache.DIR_NAME).iterdir())
    # one clean record, and the parsers' and comparators' index written beside it after
    # the full discovery
    assert len([f for f in files if not f.startswith("indexes-")]) == 1
    index, designs = lint_cache.load_indexes(site_dir / "state")
    assert index and index["ofed_info"] == "ofed_info" and index["ibstatus"] == "ibstat"
    assert (
        designs
        and designs["sm-master-standby"] == ("sm", "fleet")
        and designs["dcgm-diag"] == ("gpu_health", "host")
    )


def test_without_state_lint_always_runs(site):
    site_dir, calls = site
    load(site_dir, state=False)
    load(site_dir, state=False)
    assert len(calls) == 2
    assert not (site_dir / "state" / lint_cache.DIR_NAME).exists()


def test_changed_inventory_lints_again(site):
    site_dir, calls = site
    load(site_dir)
    inv = site_dir / "inventory.yaml"
    inv.write_text(inv.read_text() + "        gpu002: {ansible_host: 127.0.0.2}\n")
    load(site_dir)
    assert len(calls) == 2


def test_changed_step_lints_again_and_problem_is_reported_every_time(site):
    site_dir, calls = site
    load(site_dir)
    bad = site_dir / "steps" / "10-software.yaml"
    bad.write_text(STEPS.replace("parse: ofed_info", "parse: no-such-parser"))
    for _ in range(2):
        with pytest.raises(InputError) as exc:
            load(site_dir)
        assert any("no-such-parser" in str(p) for p in exc.value.problems)
    assert len(calls) == 1  # the loader itself refuses the unknown parser; lint is not reached


def test_entry_that_does_not_match_its_key_is_not_trusted(site):
    site_dir, calls = site
    load(site_dir)
    (entry,) = [
        p for p in (site_dir / "state" / lint_cache.DIR_NAME).iterdir() if not p.name.startswith("indexes-")
    ]
    entry.write_text('{"key": "0000", "problems": 0}')
    load(site_dir)
    assert len(calls) == 2


def test_missing_state_directory_is_not_created(site):
    site_dir, calls = site
    project.load_project(site_dir / "steps", site_dir / "inventory.yaml", state=site_dir / "nowhere")
    assert not (site_dir / "nowhere").exists()


def test_key_covers_the_code(site, monkeypatch):
    """The key has the fingerprint of lint's code (tests/core/test_code_fingerprint.py
    shows what changes it) for the packages lint depends on."""
    site_dir, _ = site
    p = load(site_dir)
    k = lint_cache.key(p.runbook, p.inventory)
    assert set(lint_cache.CODE) >= {"*.py", "definition", "inventory", "criteria", "parsers"}
    monkeypatch.setattr(lint_cache, "fingerprint", lambda parts: "other code")
    assert lint_cache.key(p.runbook, p.inventory) != k


@pytest.mark.parametrize(
    "spoil",
    [
        lambda entry: os.chmod(entry, 0o666),  # another user could have written it
        lambda entry: os.chmod(entry.parent, 0o777),
        lambda entry: os.chown(entry, 12345, -1) if os.getuid() == 0 else pytest.skip("needs root"),
    ],
    ids=["file-mode", "dir-mode", "owner"],
)
def test_entry_not_written_by_us_is_not_trusted(site, spoil):
    site_dir, calls = site
    load(site_dir)
    directory = site_dir / "state" / lint_cache.DIR_NAME
    assert oct(os.stat(directory).st_mode & 0o777) == "0o700"
    (entry,) = [p for p in directory.iterdir() if not p.name.startswith("indexes-")]
    spoil(entry)
    load(site_dir)
    assert len(calls) == 2
