"""ibqueryerrors, ibdiagnet and perftest (ib_write_bw family)."""

import pytest

from runbook.parsers import ParseError, parse

from ._fixtures import fixture_cases, parsed


def _queryerrors_ibsim(r):
    (node,) = r["nodes"]
    assert node["guid"] == "0x0000000000200002" and node["name"] == "hxa-su1-leaf-r1"
    assert [p["port"] for p in node["ports"]] == ["ALL", 33]
    assert r["errors"] == [
        {
            "node": "hxa-su1-leaf-r1",
            "guid": "0x0000000000200002",
            "port": 33,
            "counter": "SymbolErrorCounter",
            "value": 250,
            "remote": None,  # no "Link info:" line: printed with -r only
        },
        {
            "node": "hxa-su1-leaf-r1",
            "guid": "0x0000000000200002",
            "port": 33,
            "counter": "LinkDownedCounter",
            "value": 3,
            "remote": None,
        },
    ]
    assert r["summary"] == {"nodes_checked": 16, "bad_nodes": 1, "ports_checked": 226, "bad_ports": 1}
    assert r["clean"] is False and r["bad_ports"] == 1


def _ibdiagnet1(r):
    assert r["layout"] == "ibdiagnet1" and len(r["stages"]) == 8
    assert r["by_stage"]["IPoIB Subnets Check"] == {"errors": 0, "warnings": 1}
    assert r["by_stage"]["Bad GUIDs/LIDs Check"] == {"errors": 0, "warnings": 0}
    assert (r["errors"], r["warnings"]) == (0, 1)
    assert r["discovered"] == {"nodes": 2, "switches": 0, "cas": 2}
    assert r["log_file"] == "/tmp/ibdiagnet.log"
    assert "Suboptimal rate for group. Lowest member rate:20Gbps > group-rate:10Gbps" in r["warning_messages"]


def _ibdiagnet2_mangled(r):
    assert r["layout"] == "ibdiagnet2" and len(r["stages"]) == 11
    assert r["by_stage"]["Speed / Width checks"] == {"errors": 15, "warnings": 0}
    assert r["by_stage"]["Nodes Information"] == {"errors": 0, "warnings": 16}
    assert r["by_stage"]["Discovery"] == {"errors": 0, "warnings": 3}
    assert r["stages"][-1]["stage"] == "Create IBNetDiscover File"
    assert (r["errors"], r["warnings"]) == (15, 19)


def _ibdiagnet2_routing(r):
    assert [s["stage"] for s in r["stages"]] == ["Discovery", "Virtualization", "Routing"]
    assert (r["errors"], r["warnings"]) == (0, 3)
    assert r["fabric"] == {
        "total_nodes": 15,
        "ib_switches": 3,
        "ib_channel_adapters": 9,
        "ib_aggregation_nodes": 3,
        "ib_routers": 0,
    }
    assert r["adaptive_routing_switches"] == 3


def _write_bw_dgx_spark(r):
    assert r["test"] == "RDMA_Write" and r["bidirectional"] is False
    assert (r["device"], r["qps"], r["connection_type"], r["link_type"], r["mtu"]) == (
        "rocep1s0f0",
        4,
        "RC",
        "IB",
        1024,
    )
    assert r["unit"] == "Gb/sec"
    assert r["rows"] == [
        {"bytes": 65536, "iterations": 20000, "bw_peak": 111.62, "bw_average": 111.61, "msg_rate": 0.212877}
    ]
    assert r["bw_average_gbps"] == 111.61 and r["bw_peak_gbps"] == 111.62
    assert r["local_lids"] == [0, 0, 0, 0]  # RoCE despite "Link type : IB" (forced)


def _send_bw_ud_sweep(r):
    assert r["test"] == "Send" and r["connection_type"] == "UD" and r["device"] == "mlx4_0"
    assert r["unit"] == "MB/sec" and r["mtu"] == 4096
    assert [row["bytes"] for row in r["rows"]] == [2**i for i in range(1, 13)]
    assert r["rows"][-1] == {
        "bytes": 4096,
        "iterations": 1000,
        "bw_peak": 3019.29,
        "bw_average": 3018.58,
        "msg_rate": 0.772757,
    }
    assert r["bw_average_gbps"] == pytest.approx(3018.58 * 1048576 * 8 / 1e9, abs=0.01)  # 25.32
    assert r["bw_peak_gbps"] == pytest.approx(25.33, abs=0.01)
    assert (r["local_lids"], r["remote_lids"]) == ([4], [5])


def _send_bw_bidir_duration(r):
    assert r["test"] == "Send" and r["bidirectional"] is True
    (row,) = r["rows"]
    assert row["iterations"] == 8758300 and row["bw_peak"] == 0.0 and row["bw_average"] == 11403.46
    assert r["bw_average_gbps"] == pytest.approx(95.66, abs=0.01)
    assert r["bw_peak_gbps"] is None  # duration mode measures no peak
    assert (r["local_lids"], r["remote_lids"]) == ([0x18], [0x13])


CASES = {
    ("ibqueryerrors", "ibsim-lab-symbol-errors-linkdowned.txt"): _queryerrors_ibsim,
    ("ibdiagnet", "ArchWiki-ibdiagnet-1.5.7-ibutils1-2CAs-no-switch-full-summary.txt"): _ibdiagnet1,
    ("ibdiagnet", "ibdiagnet2-Summary-table-11-stages-blank-lines-inserted-mangled.txt"): _ibdiagnet2_mangled,
    (
        "ibdiagnet",
        "ibdiagnet2-routing-dump-only-Fabric-Summary-and-Summary-table-AR-3-switches.txt",
    ): _ibdiagnet2_routing,
    (
        "ib_write_bw",
        "DGX-Spark-CX7-rocep-force-link-IB-4qp-111Gbps-client-tabs-expanded.txt",
    ): _write_bw_dgx_spark,
    ("ib_write_bw", "ib_send_bw-UD-mlx4-QDR-IB-sweep-MB-per-sec-client.txt"): _send_bw_ud_sweep,
    ("ib_write_bw", "ib_send_bw-bidirectional-mlx5-IB-RC-duration-server.txt"): _send_bw_bidir_duration,
}


@fixture_cases(CASES)
def test_fixture(directory, name, check):
    check(parsed(directory, name))


def test_clean_ibqueryerrors_is_clean():
    text = (
        "\n## Summary: 60 nodes checked, 0 bad nodes found\n"
        "##          512 ports checked, 0 ports have errors beyond threshold\n"
        "## Thresholds: \n## Suppressed:\n"
    )
    r = parse("ibqueryerrors", text)
    assert r["clean"] is True and r["errors"] == [] and r["summary"]["ports_checked"] == 512


def test_perftest_header_without_rows_is_refused():
    text = (
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
        "---------------------------------------------------------------------------------------\n"
    )
    with pytest.raises(ParseError, match="no rows"):
        parse("ib_write_bw", text)


def test_perftest_glued_peak_and_average_are_split():
    text = (
        " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
        " 4096       8758300          0.0011403.46                   2.919285\n"
    )
    (row,) = parse("ib_write_bw", text)["rows"]
    assert (row["bw_peak"], row["bw_average"]) == (0.0, 11403.46)
