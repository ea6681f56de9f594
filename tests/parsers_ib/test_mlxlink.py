import pytest

from runbook.parsers import ParseError, parse

from ._fixtures import fixture_cases, parsed, text


def _bf3_eth(r):
    assert (r["state"], r["physical_state"], r["speed"], r["protocol"], r["speed_name"]) == (
        "Active",
        "LinkUp",
        "100G",
        "Ethernet",
        None,
    )
    assert (r["width"], r["lanes"], r["fec"]) == ("4x", 4, "Standard RS-FEC - RS(528,514)")
    assert r["enabled_link_speeds"] == ["100G_4X"]  # "Enabled Link Speed (Ext.)"
    assert r["supported_cable_speeds"][:2] == ["100G_4X", "50G_2X"]
    ber = r["ber"]
    assert (ber["effective_errors"], ber["effective_ber"], ber["raw_ber"]) == (0, 15e-255, 15e-255)
    assert ber["raw_errors_per_lane"] == [0, 0, 0, 0] and ber["link_down_counter"] == 0
    assert ber["time_since_last_clear_min"] == 25074.8 and ber["symbol_errors"] is None  # Ethernet
    assert r["module"]["identifier"] == "QSFP28" and r["module"]["vendor_part_number"] == "Q28-PC03"
    assert (r["firmware_version"], r["amber_version"], r["mft_version"]) == ("32.43.2402", "3.6", "4.30.1-8")


def _cx6_hdr_2x(r):
    assert (r["speed"], r["protocol"], r["speed_name"], r["width"], r["lanes"]) == (
        "IB-HDR",
        "IB",
        "HDR",
        "2x",
        2,
    )
    assert r["fec"] == "RS-FEC - (544,514) + PLR"
    assert r["enabled_link_speeds"] == ["HDR", "EDR", "FDR", "QDR", "SDR"]
    assert "FDR10" in r["supported_cable_speeds"]
    assert (r["status_opcode"], r["recommendation"]) == (0, "No issue was observed")
    assert r["mft_version"] == "4.24.0-72" and r["module"] is None
    assert r["ber"]["effective_ber"] is None  # no -c: not read, not guessed
    assert r["tool_errors"] == ['-E- "--show_ber_monitor" option is not supported for HCA']


def _cx7_ndr_module(r):
    assert (r["speed_name"], r["lanes"], r["state"]) == ("NDR", 4, "Active")
    assert r["fec"] == "Ethernet_Consortium_LL_50G_RS_FEC_PLR -(272,257+1)"  # trailing space dropped
    assert r["firmware_version"] == "28.46.3048" and r["mft_version"] == "4.35.0-159"
    m = r["module"]
    assert (m["identifier"], m["compliance"], m["vendor_part_number"]) == (
        "OSFP",
        "IB NDR",
        "OSFPFL-400G-PC01",
    )
    assert m["rx_los_per_lane"] == [1, 0, 1, 1] and m["rx_cdr_lol_per_lane"] == [1, 1, 1, 1]
    assert m["tx_fault_per_lane"] == [0, 0, 0, 0] and m["transfer_distance_m"] == "1"
    assert r["sections"]["module_info"]["error_code_response"] == "ConfigUndefined"


CASES = {
    (
        "mlxlink",
        "BlueField3-MT41692-ETH-100G-QSFP28-passive-DAC-fw32.43-mft4.30.1-amBER3.6-m-c-no-errors.txt",
    ): _bf3_eth,
    (
        "mlxlink",
        "CX6-MT4123-IB-HDR-2x-width-fw20.36.1010-mft4.24-default-info-plus-E-show_ber_monitor-not-"
        "supported-for-HCA.txt",
    ): _cx6_hdr_2x,
    (
        "mlxlink",
        "CX7-MT4129-IB-NDR-4x-fw28.46.3048-mft4.35-show_module-OSFP-passive-DAC-RxLOS-1011-RxCDRLOL-"
        "1111-trailing-spaces.txt",
    ): _cx7_ndr_module,
}


@fixture_cases(CASES)
def test_fixture(directory, name, check):
    check(parsed(directory, name))


def test_ib_counters_with_symbol_errors():
    out = (
        "Operational Info\n----------------\nState                           : Active\n"
        "Physical state                  : LinkUp\nSpeed                           : IB-HDR\n"
        "Width                           : 4x\nFEC                             : RS-FEC - (544,514) + PLR\n\n"
        "Physical Counters and BER Info\n------------------------------\n"
        "Time Since Last Clear [Min]     : 120.5\nSymbol Errors                   : 3\n"
        "Symbol BER                      : 1E-14\nEffective Physical Errors       : 0\n"
        "Effective Physical BER          : 15E-255\nRaw Physical Errors Per Lane    : 120,4,0,9\n"
        "Raw Physical BER                : 2E-9\nLink Down Counter               : 2\n"
    )
    ber = parse("mlxlink", out)["ber"]
    assert (ber["symbol_errors"], ber["symbol_ber"], ber["raw_ber"]) == (3, 1e-14, 2e-9)
    assert ber["raw_errors_per_lane"] == [120, 4, 0, 9] and ber["link_down_counter"] == 2


def test_crlf_copy_reads_the_same():
    name = "CX6-MT4123-IB-HDR-2x-width-fw20.36.1010-mft4.24-default-info-plus-E-show_ber_monitor-not-supported-for-HCA.txt"
    assert parse("mlxlink", text("mlxlink", name).replace("\n", "\r\n")) == parse(
        "mlxlink", text("mlxlink", name)
    )


def test_tool_error_only():
    with pytest.raises(ParseError, match="error"):
        parse("mlxlink", "-E- Failed to open device: /dev/mst/mt4129_pciconf9, No such file or directory\n")
