import pytest

from runbook.parsers import ParseError, parse

from ._fixtures import fixture_cases, parsed, text


def _archwiki_dual_port(r):
    (ca,) = r["cas"]
    assert ca["name"] == "mlx4_0" and ca["type"] == "MT25418" and ca["num_ports"] == 2
    assert ca["firmware_version"] == "2.9.1000" and ca["hardware_version"] == "a0"
    assert ca["node_guid"] == "0x0002c90300002f78"
    p1, p2 = ca["ports"]["1"], ca["ports"]["2"]
    assert (p1["state"], p1["physical_state"], p1["rate"]) == ("Active", "LinkUp", 20)
    assert p1["base_lid"] == 3 and p1["sm_lid"] == 3 and p1["lmc"] == 0
    assert p1["port_guid"] == "0x0002c90300002f79" and p1["capability_mask"] == "0x0251086a"
    assert (p2["state"], p2["physical_state"], p2["rate"], p2["base_lid"]) == ("Down", "Polling", 10, 0)
    assert [(p["ca"], p["port"], p["state"]) for p in r["ports"]] == [
        ("mlx4_0", 1, "Active"),
        ("mlx4_0", 2, "Down"),
    ]


def _cx3_fdr_tabs(r):
    port = r["by_name"]["mlx4_0"]["ports"]["1"]
    assert r["cas"][0]["type"] == "MT4099" and r["cas"][0]["firmware_version"] == "2.42.5000"
    assert port["rate"] == 56 and port["base_lid"] == 1 and port["sm_lid"] == 1
    assert port["link_layer"] == "InfiniBand"
    assert port["port_guid"] == "0x98039b0300dccab1"


def _h20_ndr(r):
    assert [ca["name"] for ca in r["cas"]] == ["mlx5_0", "mlx5_1"]
    assert [p["base_lid"] for p in r["ports"]] == [50, 49]
    assert all(p["rate"] == 400 and p["sm_lid"] == 1 and p["state"] == "Active" for p in r["ports"])
    assert r["cas"][1]["node_guid"] == "0xa088c2030074cbaa"
    assert r["ports"][0]["capability_mask"] == "0xa751e848"


def _qdr_spaces(r):
    (port,) = r["ports"]
    assert port["ca"] == "mlx4_0" and port["port"] == 1
    assert port["default_gid"] == "fe80:0000:0000:0000:0002:c903:000d:7aad"
    assert port["base_lid"] == 5 and port["sm_lid"] == 4
    assert (port["state"], port["state_num"], port["phys_state"]) == ("ACTIVE", 4, "LinkUp")
    assert (port["rate_gbps"], port["width"], port["speed"]) == (40, "4X", "QDR")


def _gpud_a100(r):
    assert len(r["ports"]) == 9
    ib = r["ports"][:8]
    assert [p["ca"] for p in ib] == [f"mlx5_{i}" for i in range(8)]
    assert all(p["rate_gbps"] == 200 and p["speed"] == "HDR" and p["sm_lid"] == 1 for p in ib)
    assert ib[0]["base_lid"] == 0x33BF and ib[7]["base_lid"] == 0x33F9
    eth = r["ports"][8]
    assert eth["ca"] == "mlx5_8" and eth["link_layer"] == "Ethernet"
    assert eth["default_gid"] == "unknown" and eth["base_lid"] == 0 and eth["rate_gbps"] == 40


CASES = {
    (
        "ibstat",
        "ArchWiki-ConnectX-MT25418-dualport-P1-Active-P2-Down-Polling-spaces.txt",
    ): _archwiki_dual_port,
    ("ibstat", "ConnectX-3-mlx4-MT4099-FDR56-IB-active-tabs.txt"): _cx3_fdr_tabs,
    ("ibstat", "H20-node-CX7-MT4129-NDR400-IB-Active-lid50-49-SMlid1-first-2-CAs-only.txt"): _h20_ndr,
    ("ibstatus", "ConnectX-2-mlx4-QDR-40G-spaces-not-tabs.txt"): _qdr_spaces,
    ("ibstatus", "gpud-testdata-A100-8xHDR200-IB-active-plus-1-eth.txt"): _gpud_a100,
}


@fixture_cases(CASES)
def test_fixture(directory, name, check):
    check(parsed(directory, name))


def test_ibstat_single_port_form_and_sdr_1x_rate():
    # `ibstat mlx5_0 1` prints the port unindented under "CA: 'name'"
    text = (
        "CA: 'mlx5_0'\nPort 1:\nState: Initializing\nPhysical state: LinkUp\nRate: 2.5\n"
        "Base lid: 0\nLMC: 0\nSM lid: 0\nCapability mask: 0x2651e848\n"
        "Port GUID: 0x0002c90300002f79\nLink layer: InfiniBand\n"
    )
    (port,) = parse("ibstat", text)["ports"]
    assert port["state"] == "Initializing" and port["rate"] == 2.5 and port["base_lid"] == 0


def test_ibstat_truncated_port_is_refused():
    with pytest.raises(ParseError, match="no State line"):
        parse("ibstat", "CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n")


H20 = "H20-node-CX7-MT4129-NDR400-IB-Active-lid50-49-SMlid1-first-2-CAs-only.txt"


def _redact(out: str) -> str:
    return (
        out.replace("0xa088c2030074cfda", "0xxxxxxxxxxxxxxxxx", 2)
        .replace("Port GUID: 0xa088c2030074cbaa", "Port GUID: <redacted>")
        .replace("Base lid: 49", "Base lid: xx")
    )


def test_redacted_values_are_null_and_listed():
    from runbook.parsers import read

    out = _redact(text("ibstat", H20))
    r = parse("ibstat", out)  # a masked value is not a damaged output: strict reads it too
    assert r["cas"][0]["node_guid"] is None and r["cas"][0]["system_image_guid"] is None
    assert r["cas"][0]["ports"]["1"]["port_guid"] == "0xa088c2030074cfda"  # not masked: kept
    assert r["cas"][1]["ports"]["1"]["port_guid"] is None and r["ports"][1]["base_lid"] is None
    assert r["ports"][1]["state"] == "Active" and r["ports"][0]["base_lid"] == 50
    assert r["redacted"] == [
        "mlx5_0 Node GUID",
        "mlx5_0 System image GUID",
        "mlx5_1 port 1 Base lid",
        "mlx5_1 port 1 Port GUID",
    ]
    reading = read("ibstat", out, lenient=True)
    assert any("redacted" in m and "Base lid" in m for m in reading.missing)


def test_port_block_without_its_ca_line():
    from runbook.parsers import read

    lines = text("ibstat", H20).splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "Port 1:")
    block = "\n".join(lines[start : start + 11]) + "\n"  # "Port 1:" .. "Link layer" of mlx5_0
    with pytest.raises(ParseError, match="CA 'mlx5_0'"):
        parse("ibstat", block)
    reading = read("ibstat", block, lenient=True)
    (port,) = reading.record["ports"]
    assert (port["ca"], port["state"], port["rate"], port["base_lid"]) == (None, "Active", 400, 50)
    assert reading.missing == ["the \"CA 'mlx5_0'\" line before the port block"]


def test_elided_and_cut_port():
    from runbook.parsers import read

    lines = text("ibstat", H20).splitlines()
    second = lines.index("CA 'mlx5_1'")
    out = "\n".join(lines[:7] + ["        ..."] + lines[second : second + 8]) + "\n"  # mlx5_1 cut in its port
    with pytest.raises(ParseError, match="elided|State"):
        parse("ibstat", out)
    reading = read("ibstat", out, lenient=True)
    assert [c["name"] for c in reading.record["cas"]] == ["mlx5_0", "mlx5_1"]
    assert any("elided" in m for m in reading.missing)


def test_elision_that_swallowed_a_ca_line():
    from runbook.parsers import read

    lines = text("ibstat", H20).splitlines()
    second = lines.index("CA 'mlx5_1'")
    out = "\n".join(lines[:7] + ["..."] + lines[second + 1 :]) + "\n"
    with pytest.raises(ParseError):
        parse("ibstat", out)
    reading = read("ibstat", out, lenient=True)
    assert [c["name"] for c in reading.record["cas"]] == ["mlx5_0", None]
    assert reading.record["cas"][1]["node_guid"] == "0xa088c2030074cbaa"
    assert reading.record["cas"][0]["node_guid"] == "0xa088c2030074cfda"  # not overwritten
