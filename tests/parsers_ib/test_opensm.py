from runbook.parsers import parse

from ._fixtures import fixture_cases, parsed


def _sminfo_old_format(r):
    assert r["sm_running"] is True
    assert r["sm_lid"] == 1  # printed as hex "0x1"
    assert r["sm_guid"] == "0x0002c9010b7c2ae1"
    assert r["activity"] == 20 and r["priority"] == 1
    assert r["state"] is None and r["state_short"] is None  # old format prints none: not guessed


def _sminfo_no_sm(r):
    assert r["sm_running"] is False
    assert r["error"] == "query failed"
    assert r["state_short"] is None and r["sm_lid"] is None


def _sminfo_master(r):
    assert (r["sm_lid"], r["sm_guid"], r["activity"], r["priority"]) == (1, "0x0000000000100001", 506, 14)
    assert (r["state"], r["state_num"], r["state_short"]) == ("SMINFO_MASTER", 3, "MASTER")


def _nvidia_opensm_ar_updn(r):
    assert [s["state"] for s in r["states"]] == ["DISCOVERING", "MASTER"]
    assert r["states"][1] == {"state": "MASTER", "time": "Jun 17 16:47:41", "line": 25}
    assert r["state"] == "MASTER"
    assert r["subnet_up"] is True and r["subnet_up_count"] == 1
    assert r["routing_engine"] == "ar_updn"
    assert r["sm_guid"] == "0x0000000000200000"
    assert r["error_count"] == 0 and r["priority"] is None


def _syslog_master_up(r):
    assert r["state"] == "MASTER" and r["states"][0]["time"] == "Sep 20 18:38:50"
    assert r["subnet_up"] is True and r["error_count"] == 0


def _syslog_port_down(r):
    assert r["version"] == "3.2.6_20090317"
    assert r["state"] == "DISCOVERING"
    assert r["sm_port_down_count"] == 1
    assert r["subnet_up"] is False


def _ftree_tail(r):
    assert r["states"] == [] and r["state"] is None
    assert r["subnet_up"] is True
    assert r["routing_engine"] == "ftree"
    assert r["fabric"] == {"cas": 16, "ca_ports": 16, "switches": 8}


def _grep_master_priority14(r):
    assert r["priority"] == 14
    assert [s["state"] for s in r["states"]] == ["DISCOVERING", "MASTER"]
    assert r["state"] == "MASTER" and r["subnet_up"] is False


def _grep_standby(r):
    assert r["state"] == "STANDBY" and r["priority"] is None
    assert r["states"][-1]["line"] == 2


def _nvidia_doc_example(r):
    default, mine = r["partitions"]
    assert (default["name"], default["pkey"], default["pkey_raw"]) == ("Default", "0x7fff", "0xffff")
    assert default["ipoib"] is True and default["flags"] == {"ipoib": True}
    assert default["members"] == [
        {"guid": "ALL", "membership": "limited"},
        {"guid": "SELF", "membership": "full"},
    ]
    assert (mine["name"], mine["pkey"], mine["pkey_raw"]) == ("MyPartition", "0x0001", "0x8001")
    assert mine["members"][0] == {"guid": "0x0002c9030009eb3f", "membership": "full"}
    # the published typo: 17 hex digits still read as a number (as OpenSM's strtoull does), flagged
    assert mine["members"][1] == {"guid": "0x002c902000262841", "membership": "full"}
    assert r["warnings"] == [
        "line 2: GUID 0x0002c902000262841 has 17 hex digits (read as 0x002c902000262841)"
    ]
    assert r["pkeys"] == ["0x7fff", "0x0001"]


def _oracle_switch_sm(r):
    assert r["pkeys"] == ["0x7fff", "0x0001"]
    default = r["by_pkey"]["0x7fff"]
    assert [(m["guid"], m["membership"]) for m in default["members"]] == [
        ("ALL_CAS", "full"),
        ("ALL_SWITCHES", "full"),
        ("SELF", "full"),
    ]
    assert default["line"] == 4
    sun = r["by_pkey"]["0x0001"]
    assert sun["name"] == "SUN_DCS" and sun["members"] == [{"guid": "ALL_SWITCHES", "membership": "full"}]
    assert r["comments"][:2] == ["Sun DCS IB partition config file", "This file is generated, do not edit"]
    assert r["warnings"] == []


CASES = {
    ("sminfo", "OFED-README-example-old-format-hex-lid-no-state-field.txt"): _sminfo_old_format,
    ("sminfo", "OFED-README-no-SM-running-iberror-query-failed.txt"): _sminfo_no_sm,
    ("sminfo", "ibsim-lab-master-lid1-priority14.txt"): _sminfo_master,
    (
        "opensm-log",
        "NVIDIA-OpenSM-MLNX20250617-on-ibsim-stdout-startup-to-SUBNET-UP-ar_updn.txt",
    ): _nvidia_opensm_ar_updn,
    ("opensm-log", "OpenSM-3.2.6-syslog-MASTER-SUBNET-UP-hash012.txt"): _syslog_master_up,
    ("opensm-log", "OpenSM-3.2.6-syslog-start-SM-port-down-hash012.txt"): _syslog_port_down,
    (
        "opensm-log",
        "OpenSM-on-ibsim-ftree-fabric_dump_general_info-16CAs-8switches-to-SUBNET-UP-tail.txt",
    ): _ftree_tail,
    ("opensm-log", "ibsim-lab-opensm-a1-stdout-grep-Priority-state-MASTER.txt"): _grep_master_priority14,
    ("opensm-log", "ibsim-lab-opensm-a2-stdout-grep-state-STANDBY.txt"): _grep_standby,
    (
        "partitions-conf",
        "NVIDIA-doc-example-MyPartition-0x8001-Default-0xffff-guid-typo.txt",
    ): _nvidia_doc_example,
    ("partitions-conf", "Oracle-BDA-Sun-DCS-36P-switch-smpartition-list-active.txt"): _oracle_switch_sm,
}


@fixture_cases(CASES)
def test_fixture(directory, name, check):
    check(parsed(directory, name))


def test_opensm_log_counts_errors():
    text = (
        "Jun 17 16:47:41 392446 [50493740] 0x01 -> osm_sm_mad_ctrl_send_err_cb: ERR 3113: "
        "MAD completed in error (IB_TIMEOUT)\n"
        "Jun 17 16:47:42 392446 [50493740] 0x80 -> Entering STANDBY state\n"
    )
    r = parse("opensm-log", text)
    assert r["error_count"] == 1 and r["errors"][0]["code"] == "3113"
    assert r["state"] == "STANDBY"
