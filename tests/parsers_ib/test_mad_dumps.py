import pytest

from runbook.parsers import ParseError, parse

from ._fixtures import fixture_cases, parsed


def _perfquery_head8(r):
    assert (r["kind"], r["lid"], r["port"], r["capmask"]) == ("Port counters", 4, 33, "0x1300")
    assert r["PortSelect"] == 33 and r["CounterSelect"] == "0x0000"
    assert r["SymbolErrorCounter"] == 0 and r["LinkDownedCounter"] == 0 and r["PortRcvErrors"] == 0
    assert r["errors_total"] == 0
    assert len(r["counters"]) == 6  # head -8: the rest was cut by the poster


def _portinfo_grep(r):
    assert r["sm_lid"] == 1 and r["SMLid"] == 1
    assert (r["state"], r["phys_state"], r["width"], r["speed"]) == ("Active", "LinkUp", "4X", "2.5 Gbps")
    assert r["rate"] == 10 and r["generation"] == "SDR"
    assert r["lid"] is None  # grep'd out by the poster


def _pkey_tables(r):
    assert [t["lid"] for t in r["tables"]] == [12, 8, 10]
    lid12, lid8, lid10 = r["tables"]
    assert lid12["pkeys"] == ["0xffff", "0x0100", "0x8001"]
    assert lid12["partitions"] == {"0x7fff": "full", "0x0100": "limited", "0x0001": "full"}
    assert lid8["partitions"] == {"0x7fff": "full", "0x0100": "limited"}
    assert lid10["pkeys"] == ["0xffff", "0x0100", "0x8002", "0x8001"]
    assert lid10["partitions"]["0x0002"] == "full"
    assert len(lid10["entries"]) == 8 and lid10["entries"][4] == "0x0000"
    assert lid10["port"] is None  # "2>/dev/null" in the prompt is not a port number
    assert "pkeys" not in r  # three tables: no single-table shortcut


def _saquery_node_record(r):
    assert r["count"] == 1 and r["type"] == "NodeRecord"
    assert r["lid"] == 134 and r["num_ports"] == 1 and r["port_num"] == 1
    assert r["node_guid"] == r["port_guid"] == "0x98039b03006c7913"
    assert r["sys_guid"] == "0x98039b03006c7912"
    assert r["device_id"] == "0x1017" and r["vendor_id"] == "0x2C9"
    assert r["node_type"] == "Channel Adapter"
    assert r["NodeDescription"] == "MT4119 ConnectX5   Mellanox Technologies"


CASES = {
    ("perfquery", "ibsim-lab-port-counters-head8.txt"): _perfquery_head8,
    ("smpquery-portinfo", "ibsim-lab-portinfo-grep-state-width-speed.txt"): _portinfo_grep,
    ("smpquery-pkeys", "ibsim-lab-pkey-tables-3-ports.txt"): _pkey_tables,
    ("saquery", "ConnectX5-NodeRecord-lid134-mailinglist-tabs-lost.txt"): _saquery_node_record,
}


@fixture_cases(CASES)
def test_fixture(directory, name, check):
    check(parsed(directory, name))


def test_single_pkey_table_with_both_memberships():
    text = (
        "   0: 0xffff 0x8100 0x0100 0x0000 0x0000 0x0000 0x0000 0x0000\n"
        "   8: 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000\n"
        "16 pkeys capacity for this port\n"
    )
    r = parse("smpquery-pkeys", text)
    assert r["capacity"] == 16 and len(r["entries"]) == 16
    assert r["partitions"] == {"0x7fff": "full", "0x0100": "both"}


def test_portinfo_full_dump_with_capmask_list_and_extended_speed():
    text = (
        "# Port info: Lid 12 port 1\n"
        "Lid:.............................12\n"
        "SMLid:...........................1\n"
        "CapMask:.........................0x2651e848\n"
        "\t\t\t\tIsTrapSupported\n\t\t\t\tIsAutomaticMigrationSupported\n"
        "LinkWidthActive:.................4X\n"
        "LinkSpeedActive:.................Extended speed\n"
        "LinkSpeedExtActive:..............53.125 Gbps\n"
        "LinkState:.......................Active\n"
        "PhysLinkState:...................LinkUp\n"
    )
    r = parse("smpquery-portinfo", text)
    assert (r["query_lid"], r["query_port"], r["lid"]) == (12, 1, 12)
    assert r["rate"] == 200 and r["generation"] == "HDR"
    assert r["details"]["CapMask"] == ["IsTrapSupported", "IsAutomaticMigrationSupported"]


def test_perfquery_error_total_adds_error_counters():
    text = (
        "# Port counters: Lid 7 port 1 (CapMask: 0x1A00)\n"
        "SymbolErrorCounter:..............12\nLinkDownedCounter:...............2\n"
        "PortXmitData:....................123456\n"
    )
    r = parse("perfquery", text)
    assert r["errors_total"] == 14


def test_portinfo_refuses_counters():
    with pytest.raises(ParseError):
        parse("smpquery-portinfo", "PortSelect:......33\nSymbolErrorCounter:.....0\n")


# `saquery SMIR` (SMInfoRecords) as infiniband-diags prints it (dump_sm_info_record in saquery.c: a tab-indented
# "RID" line and "SMInfo dump:" sub-header inside each record), a master and a standby SM.
SAQUERY_SMINFO = (
    "SMInfoRecord dump:\n\t\tRID\n\t\tLID...................1\n\t\tSMInfo dump:\n"
    "\t\tGUID..................0x0002c90300a1b2c3\n\t\tSM_Key................0x0000000000000000\n"
    "\t\tActCount..............50211\n\t\tPriority..............14\n\t\tSMState...............3\n"
    "SMInfoRecord dump:\n\t\tRID\n\t\tLID...................7\n\t\tSMInfo dump:\n"
    "\t\tGUID..................0x0002c90300a1b2d4\n\t\tSM_Key................0x0000000000000000\n"
    "\t\tActCount..............0\n\t\tPriority..............13\n\t\tSMState...............2\n"
)


def test_saquery_sminfo_records():
    r = parse("saquery", SAQUERY_SMINFO)
    assert r["count"] == 2
    assert [(s["lid"], s["priority"], s["state_name"]) for s in r["sm_records"]] == [
        (1, 14, "MASTER"),
        (7, 13, "STANDBY"),
    ]
    assert r["master"]["guid"] == "0x0002c90300a1b2c3" and r["sm_records"][1]["act_count"] == 0


def test_perfquery_extended_counters():
    out = (
        "# Port extended counters: Lid 4 port 1 (CapMask: 0x5A00)\nPortSelect:......................1\n"
        "CounterSelect:...................0x0000\nPortXmitData:....................91842352\n"
        "PortRcvData:.....................91842117\nPortXmitPkts:....................1275588\n"
        "PortRcvPkts:.....................1275585\nPortUnicastXmitPkts:.............1275588\n"
    )
    r = parse("perfquery", out)
    assert (r["lid"], r["port"], r["kind"]) == (4, 1, "Port extended counters")
    assert r["PortXmitData"] == 91842352 and r["errors_total"] == 0
