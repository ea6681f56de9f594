"""fabric-port-errors: the fabric-health evidence, read from ibdiagnet (its console
plus the NODES / LINKS / PM_INFO sections of ibdiagnet2.db_csv) or from
`ibqueryerrors -r`. Read on every real ibqueryerrors and ibdiagnet output."""

from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse

from ._fixtures import root

# Columns are read by name: this table puts them in another order than the
# simulator does, with a counter the PM agent could not read ("NA").
DB_CSV = """### /var/tmp/runbook-fabric-health/ibdiagnet2.db_csv
START_NODES
NodeDesc,NumPorts,NodeType,ClassVersion,BaseVersion,SystemImageGUID,NodeGUID,PortGUID,DeviceID,PartitionCap,revision,VendorID,LocalPortNum
"gpu03.dc.example mlx5_2",1,1,1,1,0xb8599f0310000302,0xb8599f0310000302,0xb8599f0310000302,4129,128,0,0x02c9,1
"MF0;leaf03:MQM9700/U1",64,2,1,1,0xfc6a1c0300a00009,0xfc6a1c0300a00009,0xfc6a1c0300a00009,54002,8,0,0x02c9,0
END_NODES

START_LINKS
NodeGuid1,PortNum1,NodeGuid2,PortNum2
0xb8599f0310000302,1,0xfc6a1c0300a00009,3
END_LINKS

START_PM_INFO
NodeGUID,PortGUID,PortNumber,SymbolErrorCounter,LinkDownedCounter,LinkErrorRecoveryCounter,PortRcvErrors,PortXmitDiscards,VL15Dropped
0xb8599f0310000302,0xb8599f0310000302,1,0,0,0,0,0,NA
0xfc6a1c0300a00009,0xfc6a1c0300a00009,3,4873,0,3,0,0,0
END_PM_INFO
"""


def _files(directory: str):
    return sorted(p for p in (root() / directory).iterdir() if p.is_file())


@pytest.mark.parametrize("path", _files("ibqueryerrors"), ids=lambda p: p.name)
def test_every_real_ibqueryerrors_output_is_read(path):
    r = parse("fabric-port-errors", path.read_text())
    plain = parse("ibqueryerrors", path.read_text())
    assert r["source"] == "ibqueryerrors"
    assert [(e["node"], e["port"], e["counter"], e["value"]) for e in r["errors"]] == [
        (e["node"], e["port"], e["counter"], e["value"]) for e in plain["errors"]
    ]
    assert r["summary"]["nodes_checked"] == plain["summary"]["nodes_checked"] > 0
    assert r["clean"] is (not plain["errors"])


def test_the_ibsim_errors_are_named():
    path = root() / "ibqueryerrors" / "ibsim-lab-symbol-errors-linkdowned.txt"
    r = parse("fabric-port-errors", path.read_text())
    assert {(e["node"], e["port"], e["counter"], e["value"]) for e in r["errors"]} == {
        ("hxa-su1-leaf-r1", 33, "SymbolErrorCounter", 250),
        ("hxa-su1-leaf-r1", 33, "LinkDownedCounter", 3),
    }
    assert r["summary"] == {"nodes_checked": 16, "ports_checked": 226}


@pytest.mark.parametrize("path", _files("ibdiagnet") + _files("ibdiagnet-pc"), ids=lambda p: p.name)
def test_an_ibdiagnet_console_alone_is_refused_with_what_is_missing(path):
    # the console gives counts per stage, never which port: the db_csv tables are needed
    with pytest.raises(ParseError, match="db_csv|START_PM_INFO"):
        parse("fabric-port-errors", path.read_text())


@pytest.mark.parametrize("path", _files("ibdiagnet"), ids=lambda p: p.name)
def test_every_real_ibdiagnet_console_is_read_with_the_tables(path):
    console = path.read_text()
    r = parse("fabric-port-errors", console + "\n" + DB_CSV)
    assert r["source"] == "ibdiagnet"
    assert r["by_stage"] == parse("ibdiagnet", console)["by_stage"] != {}


def test_switch_side_errors_name_the_host_at_the_other_end():
    r = parse("fabric-port-errors", DB_CSV)
    assert r["errors"] == [
        {
            "node": "MF0;leaf03:MQM9700/U1",
            "guid": "0xfc6a1c0300a00009",
            "port": 3,
            "counter": "SymbolErrorCounter",
            "value": 4873,
            "remote": {"guid": "0xb8599f0310000302", "port": 1, "name": "gpu03.dc.example mlx5_2"},
        },
        {
            "node": "MF0;leaf03:MQM9700/U1",
            "guid": "0xfc6a1c0300a00009",
            "port": 3,
            "counter": "LinkErrorRecoveryCounter",
            "value": 3,
            "remote": {"guid": "0xb8599f0310000302", "port": 1, "name": "gpu03.dc.example mlx5_2"},
        },
    ]
    assert r["summary"] == {"nodes_checked": 2, "ports_checked": 2} and not r["clean"]


def test_report_port_link_info_is_kept():
    # the "Link info:" layout of rdma-core ibqueryerrors.c print_port_config (-r)
    text = (
        'Errors for 0xfc6a1c0300a00009 "MF0;leaf03:MQM9700/U1"\n'
        "   GUID 0xfc6a1c0300a00009 port ALL: [SymbolErrorCounter == 12]\n"
        "   GUID 0xfc6a1c0300a00009 port 3: [SymbolErrorCounter == 12]\n"
        "       Link info:      9   3[  ] ==( 4X        53.125 Gbps Active/  LinkUp)==>  "
        '0xb8599f0310000302     14    1[  ] "gpu03 mlx5_2" ( )\n'
        "   GUID 0xfc6a1c0300a00009 port 7: [LinkDownedCounter == 1]\n"
        '       Link info:      9   7[  ] ==(              Down/ Polling)==>             [  ] "" ( )\n'
        "\n## Summary: 20 nodes checked, 1 bad nodes found\n"
        "##          300 ports checked, 2 ports have errors beyond threshold\n"
    )
    r = parse("fabric-port-errors", text)
    assert [(e["port"], e["remote"]) for e in r["errors"]] == [
        (3, {"guid": "0xb8599f0310000302", "lid": 14, "port": 1, "name": "gpu03 mlx5_2"}),
        (7, {"guid": None, "lid": None, "port": None, "name": ""}),
    ]


@pytest.mark.parametrize(
    "bad, message",
    [
        (DB_CSV.replace("END_PM_INFO\n", ""), "no END_PM_INFO"),
        (DB_CSV.replace("START_NODES", "START_NODEZ").replace("END_NODES", "END_NODEZ"), "NODES"),
        (DB_CSV.replace("NodeGUID,PortGUID,PortNumber", "Guid,PortGUID,PortNumber"), "NodeGUID"),
        ('Errors for "gpu01 mlx5_0"\n   GUID 0x1 port 1: [SymbolErrorCounter == 2]\n', "Summary"),
    ],
)
def test_incomplete_evidence_is_refused(bad, message):
    with pytest.raises(ParseError, match=message):
        parse("fabric-port-errors", bad)


def test_other_tools_output_is_refused():
    for directory in ("perfquery", "iblinkinfo", "sminfo", "saquery"):
        for path in _files(directory):
            with pytest.raises(ParseError):
                parse("fabric-port-errors", path.read_text())
