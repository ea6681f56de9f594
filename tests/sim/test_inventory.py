"""The written inventory has the seed's shape and vars; the bundled design is the seed."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from runbook.sim.design import BUNDLED, load_design
from runbook.sim.writer import DEMO_SIZED

SEED = Path(__file__).resolve().parents[2] / "inventory" / "seed-cluster.yaml"


@pytest.mark.skipif(not SEED.exists(), reason="inventory/seed-cluster.yaml not in this checkout")
def test_bundled_design_is_the_seed_inventory():
    a, b = load_design(SEED), load_design(BUNDLED)
    assert (a.all_vars, a.compute_vars, a.sm_vars, a.sm_hosts) == (
        b.all_vars,
        b.compute_vars,
        b.sm_vars,
        b.sm_hosts,
    )


async def test_written_inventory_has_the_seed_shape(make_lab):
    lab = await make_lab(3)
    seed = yaml.safe_load(BUNDLED.read_text())["all"]
    inv = yaml.safe_load(lab.inventory.read_text())["all"]
    for key, value in seed["vars"].items():
        assert inv["vars"][key] == value
    assert inv["vars"]["ansible_ssh_private_key_file"] == str(lab.client_key)
    assert inv["vars"]["runbook_known_hosts"] == str(lab.known_hosts)
    # every design var kept, except the rank count of the fleet-wide NCCL run (this
    # lab's GPUs, 3 nodes x 8, as partitions_conf is this fabric's) and the
    # long-running checks sized for a lab (writer.DEMO_SIZED)
    assert inv["children"]["compute"]["vars"] == seed["children"]["compute"]["vars"] | DEMO_SIZED | {
        "nccl_ranks": 24
    }
    assert all(seed["children"]["compute"]["vars"][k] != v for k, v in DEMO_SIZED.items())
    assert list(inv["children"]["compute"]["hosts"]) == ["gpu01", "gpu02", "gpu03"]
    assert list(inv["children"]) == list(seed["children"])  # same groups, same order
    sm = inv["children"]["sm"]
    drop = lambda v: {k: x for k, x in v.items() if k != "partitions_conf"}
    assert drop(sm["vars"]) == drop(seed["children"]["sm"]["vars"])
    assert sm["hosts"]["sm01"]["sm_priority"] == 15 and sm["hosts"]["sm02"]["sm_priority"] == 14
    for group in ("compute", "sm"):
        for name, hv in inv["children"][group]["hosts"].items():
            assert hv["ansible_host"] == lab.node(name).address and hv["ansible_port"] == lab.node(name).port
            assert hv["ansible_host"].startswith("127.")
    assert sm["vars"]["partitions_conf"] == lab.cluster.nodes["sm01"].files["/etc/opensm/partitions.conf"]


@pytest.mark.skipif(shutil.which("ansible-inventory") is None, reason="ansible-inventory not installed")
async def test_ansible_reads_the_written_inventory(make_lab):
    lab = await make_lab(2)
    out = subprocess.run(
        ["ansible-inventory", "-i", str(lab.inventory), "--list"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    data = json.loads(out)
    assert sorted(data["compute"]["hosts"]) == ["gpu01", "gpu02"] and sorted(data["sm"]["hosts"]) == [
        "sm01",
        "sm02",
    ]
    hv = data["_meta"]["hostvars"]["gpu02"]
    assert (
        hv["ansible_port"] == lab.node("gpu02").port and hv["ofed_version"] == "MLNX_OFED_LINUX-23.10-1.1.9.0"
    )


def test_the_48_node_fabric_has_the_seeds_pkey_plan(design):
    from runbook.sim.cluster import Cluster

    plan = design.doc["all"]["children"]["sm"]["vars"].get("partitions_conf")
    if plan is None:
        pytest.skip("the seed inventory carries no partitions_conf")
    assert Cluster.build(design, 48).design_partitions() == plan


async def test_extra_groups_keep_their_hosts(make_lab):
    lab = await make_lab(2)
    children = yaml.safe_load(lab.inventory.read_text())["all"]["children"]
    for group, body in yaml.safe_load(BUNDLED.read_text())["all"]["children"].items():
        if group not in ("compute", "sm") and body.get("hosts"):
            assert set(children[group]["hosts"]) <= set(lab.names()) and children[group]["hosts"]


async def test_known_hosts_lists_names_and_address_port(make_lab):
    lab = await make_lab(1)
    node = lab.node("gpu01")
    line = next(x for x in lab.known_hosts.read_text().splitlines() if x.startswith("gpu01,"))
    names, key = line.split(" ", 1)
    assert names.split(",") == ["gpu01", f"[gpu01]:{node.port}", f"[{node.address}]:{node.port}"]
    assert key.strip() == node.host_key.export_public_key().decode().strip()
    config = lab.ssh_config.read_text()
    assert f"Host gpu01\n    HostName {node.address}\n    Port {node.port}\n" in config
    assert "StrictHostKeyChecking yes" in config
