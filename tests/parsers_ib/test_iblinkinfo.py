import pytest

from runbook.parsers import ParseError, parse

from ._fixtures import fixture_cases, parsed


def _back_to_back(r):
    assert r["switches"] == []
    assert [n["name"] for n in r["cas"]] == ["MT25408 ConnectX Mellanox Technologies", "hostname mlx4_0"]
    first, second = r["links"]
    assert first["port_guid"] == "0x0002c90300002779" and first["lid"] == 4 and first["port"] == 1
    assert first["node_guid"] is None  # a CA header names no GUID; its port line does
    assert (first["width"], first["speed"], first["generation"], first["rate"]) == (
        "4X",
        "5.0 Gbps",
        "DDR",
        20,
    )
    assert (first["peer_name"], first["peer_lid"], first["peer_port"]) == ("kvm mlx4_0", 3, 1)
    assert second["peer_name"] == "MT25408 ConnectX Mellanox Technologies" and second["peer_lid"] == 4
    assert all(link["switch"] is None for link in r["links"])


def _mqm8700(r):
    (switch,) = r["switches"]
    assert switch["guid"] == "0x0c42a10300b95bfa" and switch["name"] == "MF0;ibswitch254:MQM8700/U1"
    assert switch["lid"] == 3 and [p["port"] for p in switch["ports"]] == [1, 2, 3, 4]
    assert switch["ports"][3]["peer"] == {
        "lid": 5,
        "port": 1,
        "guid": None,
        "name": "gpu-v100-2 HCA-1",
        "ext_port": None,
    }
    assert r["truncated"] is True  # the poster elided the other ports with "..."
    agg = next(n for n in r["cas"] if n["name"] == "Mellanox Technologies Aggregation Node")
    assert agg["ports"][0]["rate"] == 200 and agg["ports"][0]["generation"] == "HDR"
    assert agg["ports"][0]["peer"]["port"] == 41
    hca = [link for link in r["links"] if link["node_type"] == "CA" and link["node"].startswith("gpu-")]
    assert {link["rate"] for link in hca} == {100}  # 4X 25.78125 Gbps = EDR
    cabling = {(x["switch"], x["port"]): (x["peer_name"], x["peer_port"]) for x in r["links"] if x["switch"]}
    assert cabling[("MF0;ibswitch254:MQM8700/U1", 3)] == ("gpu-v100-3 HCA-1", 1)


def _qdr_36_port(r):
    (switch,) = r["switches"]
    assert switch["guid"] == "0x0002c9020046c588" and switch["lid"] == 2 and len(switch["ports"]) == 36
    active = [p for p in switch["ports"] if p["state"] == "Active"]
    assert [p["peer"]["name"] for p in active] == [
        "centos-data-202 HCA-1",
        "centos-data-201 HCA-1",
        "centos-data-200 HCA-1",
        "kube-node-100 HCA-1",
    ]
    down = [p for p in switch["ports"] if p["state"] == "Down"]
    assert len(down) == 32 and {p["phys_state"] for p in down} == {"Polling"}
    assert down[0]["port"] == 5 and down[0]["peer"] is None and down[0]["rate"] is None
    assert len(r["cas"]) == 4 and all(c["ports"][0]["rate"] == 40 for c in r["cas"])
    kube = next(c for c in r["cas"] if c["name"] == "kube-node-100 HCA-1")
    assert kube["ports"][0]["port_guid"] == "0x0002c903000d7aad" and kube["ports"][0]["lid"] == 5
    assert len(r["links"]) == 40


def _ibsim_leaf_line_mode(r):
    (node,) = r["nodes"]
    assert node["name"] == "hxa-su1-leaf-r1" and node["guid"] == "0x0000000000200002"
    assert node["type"] is None  # -l lines do not say switch or CA
    assert [(x["port"], x["peer_name"], x["peer_guid"], x["peer_lid"]) for x in r["links"]] == [
        (1, "hxa-gpu01 mlx5_0", "0x0000000000100002", 5),
        (2, "hxa-gpu02 mlx5_0", "0x0000000000100006", 10),
    ]
    assert node["ports"][0]["could_be"] == "Could be 12X Could be 10.0 Gbps"
    assert node["ports"][0]["rate"] == 10 and node["ports"][0]["generation"] == "SDR"


def _ibsim_uplink_down(r):
    up, down = r["links"]
    assert (up["node"], up["port"], up["lid"], up["peer_name"], up["peer_port"]) == (
        "hxa-su2-leaf-r2",
        33,
        9,
        "hxa-spine01",
        4,
    )
    assert (down["port"], down["state"], down["phys_state"], down["peer_name"]) == (
        34,
        "Down",
        "Polling",
        None,
    )


CASES = {
    ("iblinkinfo", "ArchWiki-2CAs-back-to-back-DDR-no-switch.txt"): _back_to_back,
    (
        "iblinkinfo",
        "MQM8700-HDR-switch-4xEDR-HCAs-SHARP-aggregation-node-CA-and-Switch-headers-elided.txt",
    ): _mqm8700,
    ("iblinkinfo", "QDR-Infiniscale-IV-36port-switch-4-CAs-full-with-Down-Polling.txt"): _qdr_36_port,
    ("iblinkinfo", "ibsim-lab-switches-only-l-leaf-ports-Active-LinkUp.txt"): _ibsim_leaf_line_mode,
    ("iblinkinfo", "ibsim-lab-switches-only-l-uplink-Down-Polling.txt"): _ibsim_uplink_down,
}


@fixture_cases(CASES)
def test_fixture(directory, name, check):
    check(parsed(directory, name))


def test_ndr_and_fdr10_rates():
    text = (
        "Switch: 0x0000000000aa0001 leaf-r1:\n"
        '           7    1[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>      12    1[  ] "gpu01 mlx5_0" ( )\n'
        '           7    2[  ] ==( 4X 10.0 Gbps (FDR10) Active/  LinkUp)==>      13    1[  ] "gpu02 mlx5_0" ( )\n'
    )
    first, second = parse("iblinkinfo", text)["links"]
    assert (first["rate"], first["generation"]) == (400, "NDR")
    assert (second["rate"], second["generation"]) == (40, "FDR10")


def test_port_line_before_any_header_is_refused():
    with pytest.raises(ParseError, match="line 1"):
        parse(
            "iblinkinfo",
            '           7    1[  ] ==( 4X 2.5 Gbps Active/  LinkUp)==>      12    1[  ] "x" ( )\n',
        )
