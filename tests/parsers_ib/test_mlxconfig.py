import pytest

from runbook.parsers import ParseError, parse

from ._fixtures import fixture_cases, parsed


def _cx5_full_query(r):
    assert r["device"] == "/dev/mst/mt4119_pciconf0"
    assert r["device_type"] == "ConnectX5"
    assert r["name"] == "MCX555A-ECA_Ax_Bx"
    assert r["description"].startswith("ConnectX-5 VPI adapter card; EDR IB (100Gb/s)")
    assert r["columns"] == ["Next Boot"]
    assert len(r["configurations"]) == 143
    assert r["LINK_TYPE_P1"] == "IB(1)"
    assert r["configurations"]["LINK_TYPE_P1"] == r["next_boot"]["LINK_TYPE_P1"] == "IB(1)"
    assert "LINK_TYPE_P2" not in r  # single-port card
    assert r["SRIOV_EN"] == "False(0)" and r["NUM_OF_VFS"] == "0"
    assert r["HOST_CHAINING_DESCRIPTORS"] == "Array[0..7]"
    assert r["EXP_ROM_UEFI_x86_ENABLE"] == "True(1)"
    assert r["SAFE_MODE_THRESHOLD"] == "10"
    assert "current" not in r and "pending_changes" not in r


def _cx5_e_fragment(r):
    assert r["device"] is None  # mid-output fragment, no header
    assert r["columns"] == ["Default", "Current", "Next Boot"]
    assert len(r["configurations"]) == 14
    for column in ("default", "current", "next_boot"):
        assert r[column]["PHY_FEC_OVERRIDE_P1"] == "DEVICE_DEFAULT(0)"  # overflowing value
        assert r[column]["PHY_FEC_OVERRIDE_P2"] == "DEVICE_DEFAULT(0)"
        assert r[column]["IB_ROUTING_MODE_P2"] == "LID(1)"
    assert r["DUP_MAC_ACTION_P2"] == "LAST_CFG(0)"
    assert r["PF_NUM_PF_MSIX"] == "63"
    assert r["pending_reboot"] == []


def _cx6_set(r):
    assert r["device"] == "/dev/mst/mt4123_pciconf0"
    assert r["device_type"] == "ConnectX6"
    assert r["name"] == "MCX654106A-HCA_Ax"
    assert r["columns"] == ["Next Boot", "New"]
    assert r["pending_changes"] == {
        "LINK_TYPE_P1": {"from": "IB(1)", "to": "ETH(2)"},
        "LINK_TYPE_P2": {"from": "IB(1)", "to": "ETH(2)"},
    }
    assert r["LINK_TYPE_P1"] == "IB(1)"  # the value before the change
    assert r["confirmed"] is True and r["applied"] is True and r["reboot_required"] is True


def _cx6lx_e_fragment(r):
    assert r["columns"] == ["Default", "Current", "Next Boot"]
    assert list(r["current"])[:3] == ["MEMIC_BAR_SIZE", "MEMIC_SIZE_LIMIT", "HOST_CHAINING_MODE"]
    assert len(r["current"]) == 12
    assert r["default"]["MEMIC_SIZE_LIMIT"] == "_256KB(1)"
    assert r["current"]["ROCE_NEXT_PROTOCOL"] == r["ROCE_NEXT_PROTOCOL"] == "254"
    assert r["next_boot"]["PROG_PARSE_GRAPH"] == "False(0)"
    assert "LINK_TYPE_P1" not in r


CASES = {
    ("mlxconfig", "CX5-MCX555A-full-query-LINK_TYPE_P1-IB.txt"): _cx5_full_query,
    (
        "mlxconfig",
        "CX5-mlxconfig-e-query-3-columns-mid-fragment-overflowing-DEVICE_DEFAULT-values.txt",
    ): _cx5_e_fragment,
    ("mlxconfig", "CX6-MCX654106A-set-LINK_TYPE-IB-to-ETH-NextBoot-New-table.txt"): _cx6_set,
    (
        "mlxconfig",
        "CX6Lx-mlxconfig-e-query-Default-Current-NextBoot-3-columns-fragment-trailing-spaces.txt",
    ): _cx6lx_e_fragment,
}


@fixture_cases(CASES)
def test_fixture(directory, name, check):
    check(parsed(directory, name))


E_QUERY = """Device #1:
----------

Device type:    ConnectX7
Name:           MCX755106AS-HEA_Ax
Device:         /dev/mst/mt4129_pciconf0

Configurations:                              Default         Current         Next Boot
*        LINK_TYPE_P1                        IB(1)           IB(1)           ETH(2)
         SRIOV_EN                            False(0)        False(0)        False(0)
The '*' shows parameters with next value different from default/current value.
"""


def test_e_query_current_is_what_runs_now_and_pending_reboot_lists_changes():
    r = parse("mlxconfig", E_QUERY)
    assert r["LINK_TYPE_P1"] == "IB(1)"
    assert r["next_boot"]["LINK_TYPE_P1"] == "ETH(2)"
    assert r["modified"] == ["LINK_TYPE_P1"]
    assert r["pending_reboot"] == ["LINK_TYPE_P1"]


def test_set_declined_is_not_applied():
    text = (
        "Configurations:                                          Next Boot       New\n"
        "        LINK_TYPE_P1                                ETH(2)               IB(1)\n\n"
        " Apply new Configuration? (y/n) [n] : n\nAborted by user.\n"
    )
    r = parse("mlxconfig", text)
    assert r["confirmed"] is False and r["applied"] is False
    assert r["pending_changes"]["LINK_TYPE_P1"] == {"from": "ETH(2)", "to": "IB(1)"}


def test_tool_error_is_reported():
    with pytest.raises(ParseError, match="Failed to open device"):
        parse("mlxconfig", "-E- Failed to open device: /dev/mst/mt4129_pciconf9. No such file or directory\n")


def test_row_with_missing_value_is_refused():
    text = "Configurations:   Default   Current   Next Boot\n     LINK_TYPE_P1   IB(1)   IB(1)\n"
    with pytest.raises(ParseError, match="line 2: LINK_TYPE_P1 has 2 values, expected 3"):
        parse("mlxconfig", text)
