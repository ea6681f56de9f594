"""The Inventory model load_inventory builds: order, groups, sources and
sha256, and host_vars' magic variables compared with ansible-core's."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import subprocess
import sys

import pytest

from runbook.errors import UsageError
from runbook.inventory.load import ansible_host, host_vars, load_inventory

from .cases import CASES, DATA, ansible_env

INVDIR = DATA / "invdir"


def test_model():
    inv = load_inventory(DATA / "cluster.yaml")
    assert list(inv.hosts) == [f"gpu{i:02d}" for i in range(1, 49)] + ["sm01", "sm02"]
    assert list(inv.groups) == ["all", "ungrouped", "compute", "sm"]
    assert inv.groups["all"].children == ["ungrouped", "compute", "sm"]
    assert inv.groups["sm"].hosts == ["sm01", "sm02"] and inv.groups["sm"].vars == {
        "opensm_service": "opensm"
    }
    sm01, sm02 = inv.hosts["sm01"], inv.hosts["sm02"]
    assert sm01.groups == ["sm"] and sm01.user == "root"
    assert (sm01.address, sm01.port, sm02.address, sm02.port) == ("127.0.0.11", 2222, "sm02", 22)
    assert sm01.vars["sm_priority"] == 15
    assert sm01.vars["rail_leaves"] == {1: "leaf01", 2: "leaf02", 3: "leaf03", 4: "leaf04"}
    assert inv.hosts["gpu07"].vars["gpu_numa"] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert type(inv.hosts["gpu07"].vars["compute_nics"][0]) is dict  # plain data, not LineDict
    assert inv.group_members("all")[-2:] == ["sm01", "sm02"]


def test_seed_sha256_is_sha256sum_of_the_file():
    path = CASES["seed"][0]
    inv = load_inventory(path)
    assert inv.sources == [str(path)]
    assert inv.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_directory_sources_and_sha256():
    inv = load_inventory(INVDIR)
    rel = [str(p)[len(str(INVDIR)) + 1 :] for p in inv.sources]
    assert rel == [
        "10-base.yaml",
        "20-extra.yml",
        "sub/30-lab.yaml",
        "group_vars/all.yml",
        "group_vars/compute/10-hw.yml",
        "group_vars/compute/20-sw.yaml",
        "group_vars/compute/zz-noext",
        "group_vars/high.yml",
        "group_vars/low",
        "group_vars/storage.yml/main.yml",
        "host_vars/n1.yml",
        "host_vars/n2/a.yml",
        "host_vars/n2/b.json",
    ]
    digest = hashlib.sha256(b"".join(open(p, "rb").read() for p in inv.sources)).hexdigest()
    assert inv.sha256 == digest


def test_sha256_changes_with_a_vars_file(tmp_path):
    copy = tmp_path / "inv"
    shutil.copytree(INVDIR, copy)
    before = load_inventory(copy).sha256
    (copy / "group_vars" / "low").write_text("tier: changed\n")
    after = load_inventory(copy)
    assert after.sha256 != before and after.hosts["n2"].vars["tier"] == "changed"


def test_directory_model():
    inv = load_inventory(INVDIR)
    assert list(inv.hosts) == ["n1", "n2", "n3", "n4", "n5", "s1", "lab1"]
    assert inv.hosts["n1"].groups == ["compute", "high", "low"]
    # a group's own vars include its group_vars files (as ansible's Group.vars do)
    assert inv.groups["compute"].vars["ofed"] == "24.04-0.6.6"
    assert inv.groups["high"].vars == {"tier": "high-from-file", "ansible_group_priority": 1}


def test_single_file_of_a_directory_uses_the_group_vars_beside_it():
    inv = load_inventory(INVDIR / "10-base.yaml")
    assert list(inv.hosts) == ["n1", "n2", "n3", "n4"]
    assert inv.hosts["n3"].vars["driver"] == "550.90.07"


def test_host_vars_adds_magic_vars_over_user_vars():
    inv = load_inventory(CASES["values"][0])
    v2 = host_vars(inv, "v2")
    assert v2["inventory_hostname"] == "v2" and v2["group_names"] == ["ungrouped"]
    assert v2["groups"]["novars"] == ["plain1", "plain2"]
    assert "inventory_hostname" not in ansible_host(inv, "v2")
    with pytest.raises(UsageError):
        host_vars(inv, "nope")
    with pytest.raises(UsageError):
        ansible_host(inv, "nope")


MAGIC_SCRIPT = r"""
import json, sys
from ansible.parsing.dataloader import DataLoader
from ansible.inventory.manager import InventoryManager
from ansible.vars.manager import VariableManager
out = {}
for source in sys.argv[1:]:
    loader = DataLoader()
    inv = InventoryManager(loader=loader, sources=[source])
    vm = VariableManager(loader=loader, inventory=inv)
    hosts = {}
    for host in inv.get_hosts():
        v = vm.get_vars(host=host, include_hostvars=False)
        hosts[host.name] = {
            "inventory_hostname": str(v["inventory_hostname"]),
            "inventory_hostname_short": str(v["inventory_hostname_short"]),
            "group_names": [str(g) for g in v["group_names"]],
            "groups": {str(g): sorted(str(h) for h in m) for g, m in v["groups"].items()},
        }
    out[source] = hosts
json.dump(out, sys.stdout)
"""


def test_magic_vars_match_ansible(tmp_path):
    if importlib.util.find_spec("ansible") is None:
        pytest.skip("ansible-core is not importable")
    sources = [str(CASES[c][0]) for c in ("nested", "ranges", "invdir")]
    proc = subprocess.run(
        [sys.executable, "-c", MAGIC_SCRIPT, *sources],
        capture_output=True,
        text=True,
        env=ansible_env(str(tmp_path)),
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    theirs = json.loads(proc.stdout)
    for source in sources:
        inv = load_inventory(source)
        assert set(theirs[source]) == set(inv.hosts)
        for name, expected in theirs[source].items():
            ours = host_vars(inv, name)
            got = {k: ours[k] for k in ("inventory_hostname", "inventory_hostname_short", "group_names")}
            got["groups"] = {g: sorted(m) for g, m in ours["groups"].items()}
            assert got == expected, name
