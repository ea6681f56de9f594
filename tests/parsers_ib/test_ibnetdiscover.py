import pytest

from runbook.parsers import ParseError, parse

from ._fixtures import fixture_cases, parsed, text


def _ibhosts_old(r):
    assert r["format"] == "list" and r["links"] == []
    assert [(n["type"], n["guid"], n["num_ports"], n["name"]) for n in r["nodes"]] == [
        ("CA", "0x0002c90300002778", 2, "MT25408 ConnectX Mellanox Technologies"),
        ("CA", "0x0002c90300002f78", 2, "hostname mlx4_0"),
    ]


def _ibnodes_qdr(r):
    assert len(r["cas"]) == 4 and r["cas"][0]["name"] == "kube-node-100 HCA-1"
    (switch,) = r["switches"]
    assert (switch["guid"], switch["num_ports"], switch["lid"], switch["lmc"]) == (
        "0x0002c9020046c588",
        36,
        2,
        0,
    )
    assert switch["name"] == "Infiniscale-IV Mellanox Technologies"


def _ports_report_ibsim(r):
    assert r["format"] == "ports" and len(r["links"]) == 8
    first = r["links"][0]
    assert (first["node"], first["node_type"], first["lid"], first["port"]) == (
        "hxa-gpu01 mlx5_0",
        "CA",
        5,
        1,
    )
    assert first["port_guid"] == "0x0000000000100003"
    assert (first["width"], first["speed"], first["rate"]) == ("4x", "SDR", 10)
    assert (
        first["peer_type"],
        first["peer_name"],
        first["peer_lid"],
        first["peer_port"],
        first["peer_guid"],
    ) == ("Switch", "hxa-su1-leaf-r1", 4, 1, "0x0000000000200002")
    # rail check: every mlx5_0 lands on an -r1 leaf and every mlx5_1 on an -r2 leaf
    for link in r["links"]:
        rail = "r1" if link["node"].endswith("mlx5_0") else "r2"
        assert link["peer_name"].endswith(rail)


def _manpage_topology(r):
    assert r["format"] == "topology"
    assert [(s["name"], s["lid"], s["num_ports"]) for s in r["switches"]] == [
        ("ISR9024 Voltaire", 6, 24),
        ("SW-6IB4 Voltaire", 3, 8),
    ]
    isr = r["switches"][0]
    assert isr["guid"] == "0x005442ba00003080" and isr["sysimgguid"] == "0x005442ba00003000"
    assert isr["vendid"] == "0x8f1" and isr["devid"] == "0x5a06"
    assert [p["port"] for p in isr["ports"]] == [22, 10, 8, 6, 12]
    port22 = isr["ports"][0]
    assert port22["peer"] == {
        "type": "CA",
        "guid": "0x0008f10403961354",
        "port": 1,
        "port_guid": "0x0008f10403961355",
        "name": "MT23108 InfiniHost Mellanox Technologies",
        "lid": 4,
    }
    sw = r["switches"][1]
    degraded = [p for p in sw["ports"] if p["width"] == "1x"]
    assert [(p["port"], p["peer"]["port"], p["rate"]) for p in degraded] == [(1, 10, 2.5)]
    assert len(r["cas"]) == 4
    host = next(c for c in r["cas"] if c["guid"] == "0x0008f10403960558")
    assert [(p["port"], p["lid"], p["lmc"], p["port_guid"]) for p in host["ports"]] == [
        (2, 14, 1, "0x0008f1040396055a"),
        (1, 10, 1, "0x0008f10403960559"),
    ]
    assert host["ports"][1]["width"] == "1x"  # the other end of a degraded link
    assert len(r["links"]) == 14


def _ibswitches_via_ibnetdiscover(r):
    assert r["format"] == "list" and len(r["switches"]) == 6
    assert r["switches"][3]["name"] == "hxa-spine02" and r["switches"][3]["lid"] == 3


def _ibswitches_ibsim(r):
    assert r["count"] == 6
    assert [(s["name"], s["lid"]) for s in r["switches"]] == [
        ("hxa-su2-leaf-r2", 9),
        ("hxa-su2-leaf-r1", 7),
        ("hxa-su1-leaf-r2", 6),
        ("hxa-spine02", 3),
        ("hxa-spine01", 2),
        ("hxa-su1-leaf-r1", 4),
    ]
    assert r["by_name"]["hxa-spine01"]["guid"] == "0x0000000000200000"
    assert all(s["num_ports"] == 36 and s["lmc"] == 0 and s["port0"] == "base" for s in r["switches"])


CASES = {
    ("ibnetdiscover", "ArchWiki-ibhosts-old-format-Ca-padded-colon.txt"): _ibhosts_old,
    ("ibnetdiscover", "QDR-ibnodes-4-CAs-1-switch.txt"): _ibnodes_qdr,
    ("ibnetdiscover", "ibsim-lab-ibnetdiscover-p-CA-lines-grep-sorted.txt"): _ports_report_ibsim,
    (
        "ibnetdiscover",
        "rdma-core-manpage-example-2switch-4CA-SDR-Voltaire-tabs-expanded.txt",
    ): _manpage_topology,
    ("ibswitches", "ibsim-lab-6-switches.txt"): _ibswitches_ibsim,
}


@fixture_cases(CASES)
def test_fixture(directory, name, check):
    check(parsed(directory, name))


def test_ibnetdiscover_reads_the_ibswitches_listing_too():
    _ibswitches_via_ibnetdiscover(parse("ibnetdiscover", text("ibswitches", "ibsim-lab-6-switches.txt")))


def test_ibswitches_refuses_host_lines():
    with pytest.raises(ParseError, match="line 1.*ibnetdiscover parser"):
        parse("ibswitches", text("ibnetdiscover", "QDR-ibnodes-4-CAs-1-switch.txt"))


def test_modern_speed_and_unconnected_port_in_ports_report():
    text = (
        "SW     4  1 0x0000000000aa0001 4x NDR - CA    12  1 0x0000000000bb0002 ( 'leaf-r1' - 'gpu01 mlx5_0' )\n"
        "SW     4  2 0x0000000000aa0001 4x NDR                                    'leaf-r1'\n"
    )
    r = parse("ibnetdiscover", text)
    assert r["links"][0]["rate"] == 400 and r["links"][0]["peer_name"] == "gpu01 mlx5_0"
    assert r["links"][1]["peer_name"] is None and r["links"][1]["port"] == 2
