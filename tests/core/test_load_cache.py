"""Parsed YAML remembered under STATE/load-cache (workspace/load_cache.py): the same
text gives the same tree (lines and file included), a changed byte is another entry,
and nothing is trusted that this user did not write or that does not match its hash."""

from __future__ import annotations

import os

import pytest

from runbook import yamlsafe
from runbook.workspace import project
from runbook.workspace.load_cache import DIR_NAME, LoadCache

TEXT = """\
all:
  vars: {site: dc1, ratio: 1.5, on: true, none: null, list: [a, 2, 3.0]}
  children:
    compute:
      hosts:
        gpu001: {ansible_host: 127.0.0.1}
"""


def _same(a, b) -> None:
    assert a == b and type(a) is type(b)
    if isinstance(a, dict):
        assert (a.line, a.file, a.key_lines) == (b.line, b.file, b.key_lines)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, list):
        assert (a.line, a.file, a.item_lines) == (b.line, b.file, b.item_lines)
        for x, y in zip(a, b):
            _same(x, y)


@pytest.fixture
def state(tmp_path):
    d = tmp_path / "state"
    d.mkdir()
    return d


def _cached(state, text=TEXT, file="inv.yaml"):
    cache = LoadCache(state)
    yamlsafe.text_cache = cache
    try:
        return yamlsafe.load_text(text, file), cache
    finally:
        yamlsafe.text_cache = None


def test_a_hit_is_the_tree_parsing_gives(state):
    first, c1 = _cached(state)
    again, c2 = _cached(state, file="other.yaml")
    assert (c1.hits, c1.misses, c2.hits, c2.misses) == (0, 1, 1, 0)
    _same(again, yamlsafe.load_text(TEXT, "other.yaml"))
    _same(first, yamlsafe.load_text(TEXT, "inv.yaml"))
    assert oct(os.stat(state / DIR_NAME).st_mode & 0o777) == "0o700"


def test_a_changed_byte_is_parsed_again(state):
    _cached(state)
    tree, cache = _cached(state, TEXT.replace("dc1", "dc2"))
    assert cache.hits == 0 and tree["all"]["vars"]["site"] == "dc2"


def _entry(state):
    (entry,) = [p for p in (state / DIR_NAME).iterdir()]
    return entry


@pytest.mark.parametrize(
    "spoil",
    [
        lambda p: p.write_bytes(p.read_bytes()[:-3]),  # torn
        lambda p: p.write_bytes(p.read_bytes()[:40] + b"X" + p.read_bytes()[41:]),  # damaged
        lambda p: os.chmod(p, 0o666),  # writable by others
        lambda p: os.chmod(p.parent, 0o755),  # a directory others may read
        lambda p: os.chown(p, 12345, -1) if os.getuid() == 0 else pytest.skip("needs root"),
    ],
    ids=["torn", "damaged", "file-mode", "dir-mode", "owner"],
)
def test_an_entry_not_ours_or_not_intact_is_a_miss(state, spoil):
    _cached(state)
    spoil(_entry(state))
    tree, cache = _cached(state)
    assert (cache.hits, cache.misses) == (0, 1)
    _same(tree, yamlsafe.load_text(TEXT, "inv.yaml"))


def test_a_link_is_not_followed(state, tmp_path):
    _cached(state)
    entry = _entry(state)
    target = tmp_path / "elsewhere"
    os.replace(entry, target)
    entry.symlink_to(target)
    _, cache = _cached(state)
    assert cache.hits == 0


@pytest.mark.parametrize(
    "text",
    [
        "when: 2024-01-02\n",
        "base: &b {x: 1}\none: *b\ntwo: *b\n",
        "s: !!set {a, b}\n",
        "p: !!omap [{a: 1}]\n",
    ],
    ids=["timestamp", "alias", "set", "omap"],
)
def test_what_plain_data_cannot_say_is_not_cached(state, text):
    _cached(state, text)
    assert not (state / DIR_NAME).exists() or not any((state / DIR_NAME).iterdir())


def test_load_project_uses_it_and_loads_the_same(tmp_path, state):
    steps = tmp_path / "steps"
    steps.mkdir()
    (steps / "10-software.yaml").write_text(
        "phase: software\ntitle: Software\nsteps:\n  - id: os\n    title: OS\n    why: x\n"
        "    hosts: compute\n    verify: {run: cat /etc/os-release}\n"
    )
    (tmp_path / "inv.yaml").write_text(TEXT)
    plain = project.load_project(steps, tmp_path / "inv.yaml")
    first = project.load_project(steps, tmp_path / "inv.yaml", state=state)
    again = project.load_project(steps, tmp_path / "inv.yaml", state=state)
    assert len(list((state / DIR_NAME).iterdir())) == 2  # the step file and the inventory
    for p in (first, again):
        assert p.runbook == plain.runbook and p.inventory == plain.inventory
        assert p.runbook.sha256 == plain.runbook.sha256 and p.inventory.sha256 == plain.inventory.sha256
    assert yamlsafe.text_cache is None
