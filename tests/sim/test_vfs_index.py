"""The directory index of a node's file system (sim/vfs.py) answers what a scan
of every path answers, after the shell and the hardware have changed the node."""

from __future__ import annotations

import posixpath

import pytest

from runbook.sim.vfs import NodeFs


def scanned_listdir(fs: NodeFs, path: str) -> list[str]:
    """The listing as vfs.py computed it before the index: every path scanned."""
    node = fs.node
    dirs = fs._all_dirs()
    prefix = path.rstrip("/") + "/"
    names = set()
    for p in list(node.files) + list(fs._dynamic()) + list(dirs):
        if p.startswith(prefix) and p != prefix:
            names.add(p[len(prefix) :].split("/", 1)[0])
    return sorted(names)


def scanned_dirs(fs: NodeFs) -> set[str]:
    node = fs.node
    dirs = {"/", "/root", "/tmp", "/etc"} | set(node.dirs)
    for p in list(node.files) + list(fs._dynamic()) + list(node.dirs):
        d = posixpath.dirname(p)
        while d != "/":
            dirs.add(d)
            d = posixpath.dirname(d)
    return dirs


def assert_index_matches_scan(fs: NodeFs) -> None:
    dirs = fs._all_dirs()
    assert scanned_dirs(fs) <= dirs
    for d in sorted(dirs):
        assert fs.listdir(d) == scanned_listdir(fs, d), d


CHANGES = [
    "mkdir -p /tmp/a/b/c && echo x > /tmp/a/b/c/f && echo y > /tmp/a/g",
    "mv /tmp/a /tmp/z",
    "rm -rf /tmp/z/b",
    "rm /etc/modules-load.d/nvidia-peermem.conf",
    "echo more >> /etc/hostname",
    "mst start",
    "modprobe -r nvidia_peermem",
    "modprobe nvidia_peermem",
]


@pytest.mark.parametrize("upto", range(len(CHANGES) + 1))
async def test_listings_after_changes_match_a_full_scan(machine_of, sh, upto):
    gpu01 = machine_of(2)("gpu01")
    fs = gpu01.fs
    assert_index_matches_scan(fs)
    for command in CHANGES[:upto]:
        await sh(gpu01, command)
    assert_index_matches_scan(fs)
    out, _, _ = await sh(gpu01, "ls /tmp; ls -d /tmp/*/ 2>/dev/null; echo /etc/modules-load.d/*")
    assert ("z" in out.split()) == (upto > 1)


async def test_a_file_renamed_in_place_of_another_is_listed_by_its_new_name(machine_of, sh):
    gpu01 = machine_of(2)("gpu01")
    await sh(gpu01, "mkdir /tmp/d && echo 1 > /tmp/d/old && ls /tmp/d")
    out, _, status = await sh(gpu01, "mv /tmp/d/old /tmp/d/new && ls /tmp/d && echo /tmp/d/*")
    assert (out, status) == ("new\n/tmp/d/new\n", 0)


def test_a_state_assigned_plain_containers_is_indexed_again(machine_of):
    gpu01 = machine_of(2)("gpu01")
    fs = gpu01.fs
    fs.listdir("/etc")
    fs.node.files = {**fs.node.files, "/etc/brand-new.conf": ""}  # a plain dict, as a reload builds
    assert "brand-new.conf" in fs.listdir("/etc")
    fs.node.dirs = ["/opt/fresh"]
    assert "fresh" in fs.listdir("/opt")


def _parents_by_dirname(paths) -> set[str]:
    dirs: set[str] = set()
    for p in paths:
        d = posixpath.dirname(p)
        while d not in dirs and d != "/":
            dirs.add(d)
            d = posixpath.dirname(d)
    return dirs


def test_parents_cut_at_slashes_equal_dirname():
    import random

    from runbook.sim.vfs import _parents

    cases = ["/a/b/c", "/a/b/", "/a", "/", "/a//b", "a/b", "a", "", "//x", "/a/b/../c"]
    for c in cases:
        assert _parents([c]) == _parents_by_dirname([c]), c
    rng = random.Random(7)
    for _ in range(5000):
        paths = [
            "".join(rng.choice("ab/") for _ in range(rng.randint(0, 8))) for _ in range(rng.randint(1, 4))
        ]
        assert _parents(paths) == _parents_by_dirname(paths), paths


async def test_files_and_directories_added_extend_the_index_without_a_rebuild(machine_of, sh, monkeypatch):
    from runbook.sim import vfs

    gpu01 = machine_of(2)("gpu01")
    fs = gpu01.fs
    fs.listdir("/")  # the index built
    rebuilds = []
    entries = vfs._entries
    monkeypatch.setattr(vfs, "_entries", lambda paths, dirs: rebuilds.append(1) or entries(paths, dirs))
    # what a detached job's script does (engine/detached.py): a directory, then files in it
    job = "d=/var/tmp/runbook-jobs/r1.step; mkdir -p $d/x/y && echo 1 > $d/pid && echo ok > $d/x/y/out"
    _, err, status = await sh(
        gpu01, f"{job}; echo 0 >> $d/rc; mkdir $d/z; [ -f $d/pid ] && echo 2 > $d/x/more"
    )
    assert status == 0, err
    assert rebuilds == []
    assert_index_matches_scan(fs)
    assert fs.listdir("/var/tmp/runbook-jobs/r1.step") == ["pid", "rc", "x", "z"]
    own_dirs, own_children = set(fs._own_dirs), dict(fs._own_children)
    fs._own_of = ()  # a rebuild from scratch gives the same index
    fs._index()
    assert fs._own_dirs == own_dirs
    assert {d: sorted(n) for d, n in fs._own_children.items()} == {
        d: sorted(n) for d, n in own_children.items()
    }
