"""The file system's fast paths (sim/vfs.py) give the general path's answer on
a node's real-shaped tree: a glob compiled once per pattern part against the
per-name fnmatch over sorted listings, and read_many (one command's reads, a
port's PKey slots asked together) against one read() per path."""

from __future__ import annotations

import fnmatch
import posixpath
import re

import pytest

from runbook.sim.vfs import FsError, NodeFs


def glob_by_listing(fs: NodeFs, pattern: str, cwd: str = "/root") -> list[str]:
    """Pathname expansion as vfs.py did it before: fnmatchcase on each sorted listing."""
    absolute = pattern.startswith("/")
    parts = [p for p in pattern.split("/") if p]
    found = ["/" if absolute else cwd]
    for part in parts:
        nxt = []
        for base in found:
            if not re.search(r"[*?\[]", part):
                cand = posixpath.join(base, part)
                if fs.exists(cand):
                    nxt.append(cand)
                continue
            if not fs.isdir(base):
                continue
            for name in fs.listdir(base):
                if name.startswith(".") and not part.startswith("."):
                    continue
                if fnmatch.fnmatchcase(name, part):
                    nxt.append(posixpath.join(base, name))
        found = nxt
    if not absolute:
        prefix = cwd.rstrip("/") + "/"
        found = [f[len(prefix) :] if f.startswith(prefix) else f for f in found]
    return sorted(found)


PATTERNS = [
    "/sys/class/infiniband/*/ports/1/pkeys/*",
    "/sys/class/infiniband/*/ports/*/p*",
    "/sys/class/infiniband/mlx5_[0-2]",
    "/sys/class/infiniband/mlx5_?/device/numa_node",
    "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor",
    "/proc/irq/*/smp_affinity_list",
    "/etc/security/limits.d/*.conf",
    "/etc/*.d",
    "/etc/.*",
    "/tmp/nothing*",
    "/sys/class/net/ib*/operstate",
    "/var/tmp/runbook-jobs/*",
    "/var/tmp/runbook-jobs/*/.h*",
    "*",
    ".*",
    "../r*",
    "jobs/*/pid",
    "/var/tmp/runbook-jobs/a.b/*",  # a lone * skips the hidden name (vfs.py glob)
    "/var/tmp/runbook-jobs/*/.*",
    "/*",
    "//etc/host*",
    "/etc/nothing/*",
    "/etc/hostname/*",
    "[",
    "/root/[",
    "/root/a[b",
    "/root/]a[",
    "/dev/null",
    "/dev/n*",
    "/sys/class/infiniband/*/ports/1/state",
]


@pytest.mark.parametrize("pattern", PATTERNS)
async def test_glob_matches_the_listing_fnmatch(machine_of, sh, pattern):
    gpu01 = machine_of(2)("gpu01")
    await sh(gpu01, "mst start; mkdir -p /var/tmp/runbook-jobs/a.b /root/jobs/x; echo 1 > /root/jobs/x/pid")
    await sh(gpu01, "echo 2 > /var/tmp/runbook-jobs/a.b/.hidden; touch /root/.profile /root/plain")
    await sh(gpu01, "touch '/root/[' '/root/a[b' '/root/]a['")
    fs = gpu01.fs
    for cwd in ("/root", "/var/tmp", "/"):
        assert fs.glob(pattern, cwd) == glob_by_listing(fs, pattern, cwd), (pattern, cwd)


def reads_one_by_one(fs: NodeFs, paths: list[str]) -> list:
    out = []
    for p in paths:
        try:
            out.append(fs.read(p))
        except FsError as exc:
            out.append(("error", str(exc)))
    return out


def answers(results: list) -> list:
    return [("error", str(r)) if isinstance(r, FsError) else r for r in results]


async def test_read_many_gives_each_read_s_answer(machine_of, sh):
    machines = machine_of(4)
    gpu01 = machines("gpu01")
    fs = gpu01.fs
    pkeys = fs.glob("/sys/class/infiniband/*/ports/1/pkeys/*")
    assert len(pkeys) == 128 * len(gpu01.state.nics)
    mixed = [
        *pkeys[:130],
        "/etc/hostname",
        "/nonexistent",
        "/etc",
        *pkeys[500:503],
        "/proc/cmdline",
        *pkeys[:2],
        "/sys/class/infiniband/mlx5_0/ports/1/state",
        *pkeys[-3:],
    ]
    for paths in (pkeys, mixed, [], ["/etc/hostname"], pkeys[5:6]):
        assert answers(fs.read_many(paths)) == reads_one_by_one(fs, paths)
    # a node whose port has no table (Ethernet mode), and a fabric without a master SM
    await sh(gpu01, "mst start; mlxconfig -y -d 0000:18:00.0 set LINK_TYPE_P1=2")
    for name in ("sm01", "sm02"):
        await sh(machines(name), "systemctl stop opensm")
    for paths in (pkeys, mixed):
        assert answers(fs.read_many(paths)) == reads_one_by_one(fs, paths)


async def test_grep_over_pkeys_with_stdin_and_missing_files_in_their_places(machine_of, sh):
    gpu01 = machine_of(2)("gpu01")
    p = "/sys/class/infiniband/mlx5_0/ports/1/pkeys"
    out, err, status = await sh(gpu01, f"grep -H -v '^0x0000$' {p}/1 /nope - {p}/0 /etc {p}/1", stdin="0x1\n")
    single = []
    for f in (f"{p}/1", "/nope", "-", f"{p}/0", "/etc", f"{p}/1"):
        o, e, _ = await sh(gpu01, f"grep -H -v '^0x0000$' {f} /dev/null", stdin="0x1\n")
        single.append((o, e))
    assert out == "".join(o for o, _ in single)
    assert err == "".join(e for _, e in single)
    assert status == 2


async def test_nodes_of_one_shape_share_the_computed_index_and_a_changed_node_gets_its_own(machine_of, sh):
    from tests.sim.test_vfs_index import assert_index_matches_scan

    machines = machine_of(4)
    gpu01, gpu02 = machines("gpu01"), machines("gpu02")
    gpu01.fs._index()
    gpu02.fs._index()
    assert gpu01.fs._static_children is gpu02.fs._static_children  # built once for both
    await sh(gpu01, "modprobe -r nvidia_peermem")
    gpu01.fs._index()
    assert gpu01.fs._static_children is not gpu02.fs._static_children
    for fs in (gpu01.fs, gpu02.fs):
        assert_index_matches_scan(fs)
    assert "nvidia_peermem" not in gpu01.fs.listdir("/sys/module")
    assert "nvidia_peermem" in gpu02.fs.listdir("/sys/module")


async def test_files_renamed_and_removed_update_the_index_as_a_rebuild_would(machine_of, sh, monkeypatch):
    from runbook.sim import vfs
    from tests.sim.test_vfs_index import assert_index_matches_scan

    gpu01 = machine_of(2)("gpu01")
    fs = gpu01.fs
    fs.listdir("/")
    rebuilds = []
    entries = vfs._entries
    monkeypatch.setattr(vfs, "_entries", lambda paths, dirs: rebuilds.append(1) or entries(paths, dirs))
    # a detached job's run.sh (engine/detached.py): pid and rc written aside, then renamed
    d = "/var/tmp/runbook-jobs/r1.step"
    script = (
        f"d={d}; mkdir -p $d; echo 1 > $d/pid.tmp && mv $d/pid.tmp $d/pid; echo x > $d/out; "
        "echo 0 > $d/rc.tmp && mv $d/rc.tmp $d/rc; rm -f $d/pid $d/how; rm $d/out"
    )
    _, err, status = await sh(gpu01, script)
    assert status == 0, err
    assert rebuilds == []
    assert fs.listdir(d) == ["rc"]
    assert_index_matches_scan(fs)
    own_dirs, own_children = set(fs._own_dirs), dict(fs._own_children)
    fs._own_of = ()  # a rebuild from scratch gives the same index
    fs._index()
    assert fs._own_dirs == own_dirs
    assert {k: sorted(v) for k, v in fs._own_children.items()} == {
        k: sorted(v) for k, v in own_children.items()
    }
    # the last file of directories only it implied: they go too, as in a rebuild
    gpu01.state.files["/opt/implied/deep/x"] = "1"  # a file whose directories nothing made
    fs._own_of = ()
    fs._index()
    rebuilds.clear()
    await sh(gpu01, "echo 1 > /root/f; rm /root/f; ls /root; rm /opt/implied/deep/x")
    assert (fs.isdir("/opt/implied"), fs.isdir("/opt"), fs.isdir("/root")) == (False, True, True)
    assert rebuilds == []
    assert_index_matches_scan(fs)
    own_dirs, own_children = set(fs._own_dirs), dict(fs._own_children)
    fs._own_of = ()
    fs._index()
    assert fs._own_dirs == own_dirs
    assert {k: sorted(v) for k, v in fs._own_children.items()} == {
        k: sorted(v) for k, v in own_children.items()
    }
