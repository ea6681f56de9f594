"""Fabric comparators: ibstat ports, PKey membership, partitions.conf, the SM
pair, rail cabling, the storage IPoIB interface."""

from __future__ import annotations

import copy

import pytest

from runbook import parsers
from runbook.criteria.design import comparators

from .helpers import fixture, parse_fixture


def compare(name, record, variables):
    return comparators()[name].func(record, variables)


H20 = {"ib_rate_gbps": 400, "compute_nics": [{"dev": "mlx5_0"}, {"dev": "mlx5_1"}]}


def test_ib_ports_real_ndr_node_as_designed():
    assert compare("ib-ports", parse_fixture("ibstat", "ibstat/H20"), H20) == []


def test_ib_ports_names_rate_state_lid_and_missing_port():
    record = parse_fixture("ibstat", "ibstat/H20")
    design = dict(H20, ib_rate_gbps=200, compute_nics=H20["compute_nics"] + [{"dev": "mlx5_2"}])
    assert compare("ib-ports", record, design) == [
        "mlx5_0 port 1: rate 400, expected 200",
        "mlx5_1 port 1: rate 400, expected 200",
        "mlx5_2 port 1: not in the ibstat output (device missing?)",
    ]
    eth = copy.deepcopy(record)
    p = eth["by_name"]["mlx5_1"]["ports"]["1"]
    p.update(base_lid=0, sm_lid=0, link_layer="Ethernet")
    # an Ethernet-mode port is named for what it is, not for the LID 0 that follows from it
    assert compare("ib-ports", eth, H20) == [
        "mlx5_1 port 1: link layer Ethernet, expected InfiniBand (the port is in Ethernet mode: see link-type-ib; "
        "cabled to an IB switch it never gets link)"
    ]
    init = copy.deepcopy(record)
    init["by_name"]["mlx5_0"]["ports"]["1"].update(state="Initializing", base_lid=0, sm_lid=0)
    assert compare("ib-ports", init, H20) == [
        "mlx5_0 port 1: state Initializing with link up: no subnet manager has configured the port "
        "(see opensm-active / sm-master-standby)"
    ]


def test_ib_ports_real_dual_port_card_with_port_down():
    record = parse_fixture("ibstat", "ibstat/ArchWiki")
    ca = record["cas"][0]["name"]
    problems = compare("ib-ports", record, {"ib_rate_gbps": 20, "compute_nics": [{"dev": ca}]})
    assert problems == []  # port 1 is the designed one; port 2 (Down) is not a compute port here


def test_ib_ports_two_sm_lids_on_one_host():
    record = copy.deepcopy(parse_fixture("ibstat", "ibstat/H20"))
    record["by_name"]["mlx5_1"]["ports"]["1"]["sm_lid"] = 7
    assert compare("ib-ports", record, H20) == [
        "ports see different SM LIDs (mlx5_0 1, mlx5_1 7): expected one subnet manager"
    ]


PKEYS = {
    "pkey_compute": "0x100",
    "pkey_storage": "0x200",
    "compute_nics": [{"dev": "mlx5_0"}],
    "storage_nics": [{"dev": "mlx5_4"}],
}


def _tables(mlx5_0: list[str], mlx5_4: list[str]) -> dict:
    lines = [f"/sys/class/infiniband/mlx5_0/ports/1/pkeys/{i}:{p}" for i, p in enumerate(mlx5_0)]
    lines += [f"/sys/class/infiniband/mlx5_4/ports/1/pkeys/{i}:{p}" for i, p in enumerate(mlx5_4)]
    return parsers.parse("sysfs-pkeys", "\n".join(lines) + "\n")


def test_pkey_membership_as_designed():
    # index 0: the default partition as a limited member (0x7fff), then the own partition
    assert compare("pkey-membership", _tables(["0x7fff", "0x8100"], ["0x7fff", "0x8200"]), PKEYS) == []


def test_pkey_membership_missing_limited_and_crossed():
    problems = compare("pkey-membership", _tables(["0x7fff", "0x0100", "0x8200"], ["0x7fff"]), PKEYS)
    assert problems == [
        "mlx5_0 (compute): expected full member of 0x0100, found a limited member (PKeys 0x7fff, 0x0100, 0x8200)",
        "mlx5_0 (compute): can talk on the storage partition: a full member of 0x0200, expected none "
        "(PKeys 0x7fff, 0x0100, 0x8200)",
        "mlx5_4 (storage): expected full member of 0x0200, found not a member (PKeys 0x7fff)",
    ]


def test_pkey_membership_a_limited_member_of_the_other_plane_can_talk_to_it():
    # a limited member still reaches the other partition's full members (the storage targets)
    problems = compare(
        "pkey-membership", _tables(["0x7fff", "0x8100", "0x0200"], ["0x7fff", "0x8200"]), PKEYS
    )
    assert problems == [
        "mlx5_0 (compute): can talk on the storage partition: a limited member of 0x0200, "
        "expected none (PKeys 0x7fff, 0x8100, 0x0200)"
    ]


def test_pkey_membership_default_partition_full_isolates_nothing():
    # `Default=0x7fff, ipoib : ALL=full;`: every port 0xffff, every port reaches every other
    problems = compare("pkey-membership", _tables(["0xffff", "0x8100"], ["0xffff", "0x8200"]), PKEYS)
    assert problems == [
        f"{dev} ({role}): a full member of the default partition 0x7fff, so it reaches every port over it; "
        f"expected limited (partitions.conf: Default=0x7fff : ALL=limited, SELF=full) (PKeys 0xffff, {own})"
        for dev, role, own in (("mlx5_0", "compute", "0x8100"), ("mlx5_4", "storage", "0x8200"))
    ]


def test_pkey_membership_nccl_index_must_hold_the_compute_pkey():
    design = dict(PKEYS, nccl_ib_pkey_index=1)
    assert compare("pkey-membership", _tables(["0x7fff", "0x8100"], ["0x7fff", "0x8200"]), design) == []
    swapped = _tables(["0x8100", "0x7fff"], ["0x7fff", "0x8200"])
    assert compare("pkey-membership", swapped, design) == [
        "mlx5_0: PKey index 1 (NCCL_IB_PKEY) holds 0x7fff, expected 0x8100: NCCL would run on another partition"
    ]


def test_pkey_membership_by_pci_blames_the_dead_card_not_its_neighbour():
    # the rail-2 card at 20:00.0 is gone: the rail-3 card is now mlx5_1 (probe order)
    design = {
        "pkey_compute": "0x100",
        "pkey_storage": "0x200",
        "storage_nics": [],
        "compute_nics": [
            {"pci": "0000:18:00.0", "dev": "mlx5_0", "rail": 1},
            {"pci": "0000:20:00.0", "dev": "mlx5_1", "rail": 2},
            {"pci": "0000:98:00.0", "dev": "mlx5_2", "rail": 3},
        ],
    }
    text = (
        "0000:18:00.0 mlx5_0 (MT4129 - MCX75310AAS-NEAT) x fw 28.39.1002 port 1 (ACTIVE) ==> ib0 (Up)\n"
        "0000:98:00.0 mlx5_1 (MT4129 - MCX75310AAS-NEAT) x fw 28.39.1002 port 1 (ACTIVE) ==> ib1 (Up)\n"
        + "".join(
            f"/sys/class/infiniband/{d}/ports/1/pkeys/{i}:{p}\n"
            for d in ("mlx5_0", "mlx5_1")
            for i, p in enumerate(["0x7fff", "0x8100"])
        )
    )
    assert compare("pkey-membership", parsers.parse("sysfs-pkeys-by-pci", text), design) == [
        "rail 2 NIC 0000:20:00.0 (mlx5_1): no RDMA device at this PCI address (card dead, unseated or its "
        "driver not bound: `lspci -s 20:00.0`, `dmesg | grep 20:00.0`)"
    ]


def test_pkey_membership_real_azure_tables():
    record = parse_fixture("sysfs-pkeys", "sysfs-infiniband-pkeys/Azure")
    design = {"pkey_compute": "0x800b", "pkey_storage": "0x200", "compute_nics": [{"dev": "mlx5_0"}]}
    assert compare("pkey-membership", record, design) == []
    design["pkey_compute"] = "0x100"
    assert compare("pkey-membership", record, design) == [
        "mlx5_0 (compute): expected full member of 0x0100, found not a member (PKeys 0x800b, 0x7fff)"
    ]
    # the real table holds 0x800b at index 0: NCCL_IB_PKEY=1 would pick the default partition
    design = dict(design, pkey_compute="0x800b", nccl_ib_pkey_index=1)
    assert compare("pkey-membership", record, design) == [
        "mlx5_0: PKey index 1 (NCCL_IB_PKEY) holds 0x7fff, expected 0x800b: NCCL would run on another partition"
    ]


G = ["0xb8599f0310000100", "0xb8599f0310000101", "0xb8599f0310000104"]
CONF = f"""# managed
Default=0x7fff, ipoib : ALL=limited, SELF=full;
compute=0x100, ipoib, defmember=full :
    {G[0]}=full,
    {G[1]}=full;
storage=0x200, ipoib, defmember=full : {G[2]}=full;
"""
PLAN = {"partitions_conf": CONF, "pkey_compute": "0x100", "pkey_storage": "0x200"}


def test_partitions_as_planned():
    assert compare("partitions", parsers.parse("partitions-conf", CONF), PLAN) == []


def test_partitions_default_all_full_isolates_nothing():
    text = CONF.replace("ALL=limited, SELF=full", "ALL=full")
    plan = dict(PLAN, partitions_conf=text)  # even when the plan itself says so
    assert compare("partitions", parsers.parse("partitions-conf", text), plan) == [
        "0x7fff (Default): every port a full member of the default partition 0x7fff: compute and storage "
        "ports reach each other over it; expected ALL=limited, SELF=full"
    ]


def test_partitions_storage_targets_and_ipoib_mtu():
    targets = ["0xb8599f0330000100"]
    text = CONF.replace(
        "storage=0x200, ipoib, defmember=full :", "storage=0x200, ipoib, mtu=5, defmember=full :"
    )
    plan = dict(PLAN, partitions_conf=text, storage_target_guids=targets, storage_ipoib_mtu=4092)
    assert compare("partitions", parsers.parse("partitions-conf", text), plan) == [
        "0x0200 (storage): storage target port(s) not full members: 0xb8599f0330000100"
    ]
    with_target = text.replace(f"{G[2]}=full;", f"{G[2]}=full, {targets[0]}=full;")
    plan["partitions_conf"] = with_target
    assert compare("partitions", parsers.parse("partitions-conf", with_target), plan) == []
    no_mtu = with_target.replace(", mtu=5", "")
    assert compare(
        "partitions", parsers.parse("partitions-conf", no_mtu), dict(plan, partitions_conf=no_mtu)
    ) == ["0x0200 (storage): IPoIB mtu=4, expected mtu=5 (storage_ipoib_mtu 4092)"]


def test_partitions_missing_partition_and_members():
    text = CONF.replace(f"    {G[1]}=full;", f"    {G[2]}=full;").replace(
        f"storage=0x200, ipoib, defmember=full : {G[2]}=full;\n", ""
    )
    assert compare("partitions", parsers.parse("partitions-conf", text), PLAN) == [
        "0x0100 (compute): 1 designed full member(s) missing: 0xb8599f0310000101",
        "0x0100 (compute): 1 full member(s) not in the plan: 0xb8599f0310000104",
        "partition 0x0200 (storage) missing from partitions.conf",
    ]


def test_partitions_keyword_members_flags_and_separation():
    text = CONF.replace(
        f"storage=0x200, ipoib, defmember=full : {G[2]}=full;",
        f"storage=0x200 : {G[2]}=full, {G[0]}=full, ALL_CAS=limited;\nextra=0x300 : ALL=full;",
    )
    assert compare("partitions", parsers.parse("partitions-conf", text), PLAN) == [
        "0x0200 (storage): 1 full member(s) not in the plan: 0xb8599f0310000100",
        "0x0200 (storage): member ALL_CAS=limited not in the plan",
        "0x0200 (storage): no `ipoib` flag (its IPoIB interfaces need the broadcast group)",
        "partition 0x0300 (extra) is not in the plan",
        "0x0200 (storage): member ALL_CAS makes every port a member (compute/storage separation lost)",
        "1 port(s) full members of both 0x0100 and 0x0200: 0xb8599f0310000100",
    ]


def test_partitions_unreadable_design_is_unknown():
    record = parsers.parse("partitions-conf", CONF)
    with pytest.raises(ValueError, match="partitions_conf"):
        compare("partitions", record, dict(PLAN, partitions_conf="compute=0x100 : 0x1=full"))
    with pytest.raises(ValueError, match="no partition 0x300"):
        compare("partitions", record, dict(PLAN, pkey_storage="0x300"))


def test_partitions_real_nvidia_example():
    # MyPartition=0x8001 with two GUIDs, one written with 17 hex digits (OpenSM reads it as a number)
    record = parse_fixture("partitions-conf", "partitions-conf/NVIDIA")
    text = fixture("partitions-conf/NVIDIA")
    plan = {"partitions_conf": text, "pkey_compute": "0x1", "pkey_storage": "0x7fff"}
    assert compare("partitions", record, plan) == [
        "0x7fff (Default): member ALL makes every port a member (compute/storage separation lost)"
    ]
    plan["partitions_conf"] = text.replace("0x0002c902000262841=full", "0x0002c9030009eb40=full")
    assert compare("partitions", record, plan)[:2] == [
        "0x0001 (MyPartition): 1 designed full member(s) missing: 0x0002c9030009eb40",
        "0x0001 (MyPartition): 1 full member(s) not in the plan: 0x002c902000262841",
    ]


def _sm(state: str | None, priority: int) -> dict:
    if state is None:
        return parsers.parse("sminfo", fixture("sminfo/OFED-README-no-SM"))
    return parsers.parse(
        "sminfo",
        f"sminfo: sm lid 1 sm guid 0x100001, activity count 506 priority {priority} "
        f"state {3 if state == 'MASTER' else 2} SMINFO_{state}\n",
    )


SMV = {"sm01": {"sm_master": "sm01", "sm_priority": 15}, "sm02": {"sm_master": "sm01", "sm_priority": 14}}


def fleet(records):
    return comparators()["sm-master-standby"].func(records, {h: SMV[h] for h in records})


def test_sm_pair_as_designed_and_real_master_line():
    real = parse_fixture("sminfo", "sminfo/ibsim-lab-master")
    assert fleet({"sm01": dict(real, priority=15), "sm02": _sm("STANDBY", 14)}) == {"sm01": [], "sm02": []}


def test_sm_failed_over_names_both_roles():
    out = fleet({"sm01": _sm(None, 15), "sm02": _sm("MASTER", 14)})
    assert out["sm01"] == [
        "sm01: expected MASTER, found no SM answering (MASTER is sm02; designed master sm01)"
    ]
    assert out["sm02"] == ["sm02: expected STANDBY, found MASTER (MASTER is sm02; designed master sm01)"]


def test_sm_two_masters_and_wrong_priority():
    out = fleet({"sm01": _sm("MASTER", 15), "sm02": _sm("MASTER", 15)})
    assert out["sm01"] == ["2 masters in one subnet: sm[01-02]"]
    assert out["sm02"] == [
        "sm02: expected STANDBY, found MASTER (MASTER is sm[01-02]; designed master sm01)",
        "sm02: sm_priority 15, designed 14",
    ]


RAILS = {
    "inventory_hostname": "gpu-v100-0",
    "rail_leaves": {1: "ibswitch254", 2: "leaf02"},
    "compute_nics": [{"dev": "HCA-1", "rail": 1}],
}


def test_rail_cabling_real_iblinkinfo():
    record = parse_fixture("iblinkinfo", "iblinkinfo/MQM8700")
    assert compare("rail-cabling", record, RAILS) == []
    wrong = dict(RAILS, compute_nics=[{"dev": "HCA-1", "rail": 2}])
    assert compare("rail-cabling", record, wrong) == [
        "gpu-v100-0 HCA-1 (rail 2): expected on leaf02, found on ibswitch254 port 1"
    ]
    absent = dict(RAILS, inventory_hostname="gpu-v100-9")
    assert compare("rail-cabling", record, absent) == [
        "gpu-v100-9 HCA-1 (rail 1): not seen on any switch port (expected on ibswitch254; link down or not cabled)"
    ]


def test_rail_cabling_plain_switch_names_and_fqdn_hosts():
    text = """Switch: 0xfc6a1c0300a00007 MF0;leaf02:MQM9700/U1:
           7    1[  ] ==( 4X        53.125 Gbps Active/  LinkUp)==>      12    1[  ] "gpu01.seed-dc.internal mlx5_0" ( )
Switch: 0xfc6a1c0300a00008 leaf01:
           8    1[  ] ==( 4X        53.125 Gbps Active/  LinkUp)==>      13    1[  ] "gpu01 mlx5_1" ( )
"""
    design = {
        "inventory_hostname": "gpu01",
        "rail_leaves": {"1": "leaf01", "2": "leaf02"},
        "compute_nics": [{"dev": "mlx5_0", "rail": 1}, {"dev": "mlx5_1", "rail": 2}],
    }
    assert compare("rail-cabling", parsers.parse("iblinkinfo", text), design) == [
        "gpu01 mlx5_0 (rail 1): expected on leaf01, found on leaf02 port 1",
        "gpu01 mlx5_1 (rail 2): expected on leaf02, found on leaf01 port 1",
    ]


IB4 = """\
7: ib4: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 2044 qdisc mq state UP group default qlen 256
    link/infiniband 00:00:10:87:fe:80:00:00:00:00:00:00:b8:59:9f:03:10:00:01:04 brd 00:ff:ff:ff:ff:12:40:1b:ff:ff:00:00:00:00:00:00:ff:ff:ff:ff
    inet 10.20.1.1/16 brd 10.20.255.255 scope global ib4
       valid_lft forever preferred_lft forever
"""
STORAGE = {"storage_ipoib_if": "ib4", "storage_subnet": "10.20.0.0/16"}


def test_ipoib_storage():
    assert compare("ipoib-storage", parsers.parse("ip-addr", IB4), STORAGE) == []
    down = IB4.replace("UP,LOWER_UP> mtu 2044 qdisc mq state UP", "UP> mtu 2044 qdisc mq state DOWN").replace(
        "10.20.1.1/16", "192.168.7.1/24"
    )
    assert compare("ipoib-storage", parsers.parse("ip-addr", down), STORAGE) == [
        "ib4: expected UP with carrier, found state DOWN <BROADCAST,MULTICAST,UP>",
        "ib4: expected an address in 10.20.0.0/16, found 192.168.7.1/24",
    ]
    assert compare("ipoib-storage", parsers.parse("ip-addr", IB4), dict(STORAGE, storage_ipoib_if="ib5")) == [
        "ib5: no such interface"
    ]
