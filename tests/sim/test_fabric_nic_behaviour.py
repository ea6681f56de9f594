"""The simulated fabric and NICs behave as real ones do (issue 13, fabric side):
PKey isolation programmed by the SM, IPoIB child interfaces, ConnectX-7 and
ConnectX-6 chosen by the inventory, shared system image GUID of a dual-port
card, an Ethernet-mode port without link, FQDN node descriptions, sminfo from
a chosen port, the designed leaf uplinks, a dead card renumbering the others."""

from __future__ import annotations

import copy
import re

from runbook.sim.cluster import Cluster
from runbook.sim.machine import Machine


async def out_of(sh, node, command: str) -> str:
    out, err, code = await sh(node, command)
    assert code == 0, (command, err)
    return out


async def test_pkey_tables_default_limited_own_partition_full(machine_of, sh):
    get = machine_of(2)
    pkeys = "cat /sys/class/infiniband/{d}/ports/1/pkeys/0 /sys/class/infiniband/{d}/ports/1/pkeys/1"
    assert await out_of(sh, get("gpu01"), pkeys.format(d="mlx5_0")) == "0x7fff\n0x8100\n"  # rail port
    assert await out_of(sh, get("gpu01"), pkeys.format(d="mlx5_6")) == "0x7fff\n0x8200\n"  # storage, port 2
    # the SM's own port is the only full member of the default partition (SELF=full)
    assert (await out_of(sh, get("sm01"), pkeys.format(d="mlx5_0"))).startswith("0xffff\n")


async def test_default_partition_all_full_makes_every_port_a_full_member(machine_of, sh):
    get = machine_of(2)
    for sm in ("sm01", "sm02"):
        node = get(sm).state
        conf = node.files["/etc/opensm/partitions.conf"]
        node.files["/etc/opensm/partitions.conf"] = conf.replace("ALL=limited, SELF=full", "ALL=full")
    out = await out_of(sh, get("gpu01"), "cat /sys/class/infiniband/mlx5_0/ports/1/pkeys/0")
    assert out == "0xffff\n"


async def test_storage_ipoib_child_interface(machine_of, sh):
    gpu = machine_of(2)("gpu01")
    net = "/sys/class/net/ib4.8200"
    assert (
        await out_of(sh, gpu, f"cat {net}/pkey {net}/mode {net}/mtu {net}/operstate")
        == "0x8200\ndatagram\n4092\nup\n"
    )
    assert await out_of(sh, gpu, "cat /sys/class/net/ib4/pkey /sys/class/net/ib4/mtu") == "0xffff\n2044\n"
    out = await out_of(sh, gpu, "ip -d link show dev ib4.8200")
    assert re.match(r"\d+: ib4\.8200@ib4: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 4092 ", out)
    assert "brd 00:ff:ff:ff:ff:12:40:1b:82:00:" in out  # the P_Key inside the broadcast address
    assert "    ipoib pkey  0x8200 mode  datagram umcast  0000 " in out
    # the address lives on the child, not on the parent
    assert "inet 10.20." in await out_of(sh, gpu, "ip addr show dev ib4.8200")
    assert "inet " not in await out_of(sh, gpu, "ip addr show dev ib4")


async def test_ipoib_child_without_its_pkey_has_no_carrier_and_mtu_follows_the_partition(machine_of, sh):
    get = machine_of(2)
    for sm in ("sm01", "sm02"):
        node = get(sm).state
        conf = node.files["/etc/opensm/partitions.conf"]
        node.files["/etc/opensm/partitions.conf"] = conf.replace(
            "storage=0x200, ipoib, mtu=5,", "storage=0x200, ipoib,"
        )
    gpu = get("gpu01")
    assert await out_of(sh, gpu, "cat /sys/class/net/ib4.8200/mtu") == "2044\n"  # the default 2048 group
    get2 = machine_of(2, {"sm01": ["pkey_missing"], "sm02": ["pkey_missing"]})
    gpu = get2("gpu01")
    assert await out_of(sh, gpu, "cat /sys/class/net/ib4.8200/operstate") == "down\n"
    assert "<NO-CARRIER,BROADCAST,MULTICAST,UP>" in await out_of(sh, gpu, "ip link show dev ib4.8200")


async def test_connectx7_rails_connectx6_storage_by_the_inventory(machine_of, sh, design):
    gpu = machine_of(2)("gpu01")
    out = await out_of(sh, gpu, "ibstat mlx5_0 | head -4")
    assert "CA type: MT4129" in out and "Firmware version: 28.39.1002" in out
    assert "CA type: MT4123" in await out_of(sh, gpu, "ibstat mlx5_4")
    lspci = await out_of(sh, gpu, "lspci -vv -s 18:00.0")
    assert lspci.startswith("18:00.0 Infiniband controller: Mellanox Technologies MT2910 Family [ConnectX-7]")
    assert "LnkCap:\tPort #0, Speed 32GT/s, Width x16" in lspci
    assert "LnkSta:\tSpeed 16GT/s (downgraded), Width x16" in lspci  # a Gen5 card in a Gen4 slot
    mst = await out_of(sh, gpu, "mst start > /dev/null; mst status -v")
    assert re.search(r"^ConnectX7\(rev:0\)\s+/dev/mst/mt4129_pciconf0\s+18:00\.0\s+mlx5_0\s", mst, re.M)
    assert re.search(r"^ConnectX6\(rev:0\)\s+/dev/mst/mt4123_pciconf\d\s+2c:00\.0\s+mlx5_4\s", mst, re.M)
    # another inventory: ConnectX-6 on the rails too
    other = copy.deepcopy(design)
    for nic in other.compute_vars["compute_nics"]:
        nic["hca"] = "ConnectX-6"
    cluster = Cluster.build(other, 1)
    node = Machine(cluster, cluster.nodes["gpu01"], peers=lambda n: None)
    assert "CA type: MT4123" in await out_of(sh, node, "ibstat mlx5_0")
    assert "LnkSta:\tSpeed 16GT/s, Width x16\n" in await out_of(sh, node, "lspci -vv -s 18:00.0")


async def test_dual_port_card_shares_the_system_image_guid(machine_of, sh):
    gpu = machine_of(2)("gpu01")
    five = await out_of(sh, gpu, "ibstat mlx5_5")
    six = await out_of(sh, gpu, "ibstat mlx5_6")

    def guid(text: str, key: str) -> str:
        return re.search(key + r": (0x[0-9a-f]+)", text).group(1)

    assert guid(five, "Node GUID") != guid(six, "Node GUID")
    assert guid(six, "System image GUID") == guid(five, "System image GUID") == guid(five, "Node GUID")
    info = await out_of(sh, gpu, "ibv_devinfo -d mlx5_6")
    assert re.search(r"sys_image_guid:\s+b859:9f03:1000:0105", info)


async def test_ethernet_mode_port_on_an_ib_switch_has_no_link(machine_of, sh):
    gpu = machine_of(2, {"gpu01": ["link_type_eth"]})("gpu01")
    out = await out_of(sh, gpu, "ibstat mlx5_0")
    # as real mlx5 Ethernet ports without link print it
    assert (
        "State: Down\n\t\tPhysical state: Disabled\n\t\tRate: 40\n" in out and "Link layer: Ethernet" in out
    )
    assert "Base lid: 0" in out
    _, err, code = await sh(gpu, "sminfo -C mlx5_0 -P 1")
    assert code != 0 and "iberror" in err


async def test_node_description_is_the_fqdn_and_sminfo_from_a_chosen_port(machine_of, sh):
    gpu = machine_of(2)("gpu01")
    assert (
        await out_of(sh, gpu, "cat /sys/class/infiniband/mlx5_2/node_desc")
        == "gpu01.seed-dc.internal mlx5_2\n"
    )
    assert await out_of(sh, gpu, "sminfo -C mlx5_3 -P 1") == await out_of(sh, gpu, "sminfo")
    _, err, code = await sh(gpu, "sminfo -C mlx5_9 -P 1")
    assert code != 0 and "mlx5_9" in err


async def test_each_leaf_has_the_designed_uplinks_to_every_spine(machine_of, sh, design):
    per_spine = int(design.all_vars["leaf_uplinks"]["per_spine"])
    out = await out_of(sh, machine_of(2)("gpu01"), "ibnetdiscover")
    leaves = 0
    for block in out.split("\nvendid=")[1:]:
        head = next((x for x in block.splitlines() if x.startswith("Switch")), "")
        if "leaf" not in head:
            continue
        leaves += 1
        spines = re.findall(r'# "MF0;(spine\d+):', block)
        assert sorted(set(spines)) == sorted(design.all_vars["spines"])
        assert all(spines.count(s) == per_spine for s in set(spines)), head
    assert leaves == len(design.all_vars["rail_leaves"])


async def test_nic_dead_renumbers_the_cards_probed_after_it(machine_of, sh):
    gpu = machine_of(2, {"gpu01": ["nic_dead"]})("gpu01")
    out = await out_of(sh, gpu, "ibdev2netdev -v")
    rows = [line.split()[:2] for line in out.splitlines()]
    assert ["0000:20:00.0", "mlx5_1"] not in rows and len(rows) == 6
    assert ["0000:98:00.0", "mlx5_1"] in rows  # the rail-3 card took the dead card's name
    assert "20:00.0" not in await out_of(sh, gpu, "lspci -d 15b3:")
    assert (
        await out_of(sh, gpu, "ls /sys/class/infiniband")
        == "mlx5_0\nmlx5_1\nmlx5_2\nmlx5_3\nmlx5_4\nmlx5_5\n"
    )
