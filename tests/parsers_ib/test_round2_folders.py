"""Fixture folders of the second collection round read by existing parsers
(ib_write_bw-cuda, ibnetdiscover-fattree) and opensm-conf (opensm.conf + a
`systemctl status opensm` whose journal lines opensm-log reads)."""

import pytest

from runbook.parsers import ParseError, parse

from ._fixtures import fixture_cases, parsed


def _rtx4080_server_mib(r):
    assert (r["unit"], r["device"], r["qps"], r["mtu"]) == ("MiB/sec", "mlx5_0", 1, 4096)
    assert r["local_lids"] == [1] and r["remote_lids"] == [1]
    assert r["rows"] == [
        {
            "bytes": 65536,
            "iterations": 5000,
            "bw_peak": 14954.91,
            "bw_average": 14948.67,
            "msg_rate": 0.239179,
        }
    ]
    assert r["bw_average_gbps"] == 125.4  # 14948.67 MiB/s in Gb/s


def _a100_client_sweep(r):
    assert (r["unit"], r["qps"], r["tx_depth"], r["cq_moderation"]) == ("Gb/sec", 2, 128, 100)
    assert r["local_lids"] == [2, 2] and r["remote_lids"] == [8, 8]
    assert r["rows"][0]["bytes"] == 2 and r["rows"][0]["bw_peak"] == 0.061867
    assert r["rows"][-1]["bytes"] == 8388608 and r["bw_average_gbps"] == 80.96
    assert r["bw_average_max_gbps"] == 81.24


def _a100_server(r):
    assert [row["bytes"] for row in r["rows"]] == [8388608]
    assert (r["bw_average_gbps"], r["bw_peak_gbps"]) == (80.96, 81.02)
    assert r["local_lids"] == [8, 8]


def _quantum_iblinkinfo_s(r):
    (switch,) = r["switches"]
    assert (switch["guid"], switch["lid"], len(switch["ports"])) == ("0x08c0eb0300add04e", 10, 41)
    active = [p for p in switch["ports"] if p["state"] == "Active"]
    assert [p["port"] for p in active] == [21, 22, 23, 24, 40, 41]
    assert sum(p["state"] == "Down" and p["phys_state"] == "Polling" for p in switch["ports"]) == 35
    hca = active[0]
    assert (hca["generation"], hca["rate"], hca["could_be"]) == ("EDR", 100, "Could be 53.125 Gbps")
    assert hca["peer"]["name"] == "node3 HCA-2" and hca["peer"]["lid"] == 40
    isl = active[4]
    assert (isl["generation"], isl["rate"], isl["peer"]["port"]) == ("HDR", 200, 40)
    assert isl["peer"]["name"] == "MF0;d32-03-1:MQM8700/U1" and isl["could_be"] is None


def _ufm_opensm_conf(r):
    assert r["routing_engine"] == "ar_updn" and r["sm_priority"] is None  # no sm_priority line
    assert r["values"]["scatter_ports"] == 8 and r["values"]["routing_threads_num"] == 24
    assert r["values"]["qos"] is True and r["values"]["enable_virt_rec_ext"] is False
    assert r["settings"]["root_guid_file"] == "/opt/ufm/files/conf/opensm/root_guid.conf"
    assert r["values"]["max_op_vls"] == 2 and r["values"]["ar_tree_asymmetric_flow"] == 1


def _systemctl_opensm_journal(r):  # read by opensm-log (FILE_PARSERS)
    assert r["version"] == "3.3.20"
    assert [s["state"] for s in r["states"]] == ["DISCOVERING", "DISCOVERING", "STANDBY"]
    assert r["state"] == "STANDBY" and r["subnet_up"] is False


CASES = {
    (
        "ib_write_bw-cuda",
        "RTX4080-driver570.148.08-p2p-GDR-mlx5_0-IB-use_cuda-0-server-side-65536B-MiB-per-sec-"
        "newer-perftest.txt",
    ): _rtx4080_server_mib,
    (
        "ib_write_bw-cuda",
        "k8s-pod-A100-SXM4-80GB-IB-mlx5_0-use_cuda-0-q2-a-client-side-sweep-2B-8MB-81Gbps-pair-A.txt",
    ): _a100_client_sweep,
    (
        "ib_write_bw-cuda",
        "k8s-pod-A100-SXM4-80GB-IB-mlx5_0-use_cuda-0-q2-a-server-side-8MB-81Gbps-pair-A.txt",
    ): _a100_server,
    (
        "ibnetdiscover-fattree",
        "iblinkinfo-S-Quantum-unmanaged-switch-ISL-port40-to-MQM8700-port40-4-HCAs-25G-"
        "Could-be-53G-SHARP-AN-port41-2-switch-fabric.txt",
    ): _quantum_iblinkinfo_s,
    (
        "opensm-conf",
        "UFM-opensm.conf-excerpt-routing_engine-ar_updn-root_guid_file-scatter_ports-routing_"
        "threads-ar_tree_asymmetric_flow-no-sm_priority.txt",
    ): _ufm_opensm_conf,
    (
        "opensm-conf",
        "systemctl-status-opensm-OpenSM-3.3.20-two-instances-one-Exiting-SM-other-Entering-"
        "STANDBY-state-journal-lines.txt",
    ): _systemctl_opensm_journal,
}


def test_opensm_conf_bad_line_is_located():
    with pytest.raises(ParseError, match="line 3"):
        parse("opensm-conf", "sm_priority 14\n# comment\n[general]\n")


def _rail_validation_section(r):
    assert r["checks"] == [
        {"name": "Rail Optimized Topology Validation", "ok": True, "result": "finished successfully"}
    ]
    assert r["sections"] == ["Rail Optimized Topology Validation"] and r["stages"] == []


def _sharp_fabric_summary(r):
    assert r["checks"] == [{"name": "SHARP check trees", "ok": True, "result": "finished successfully"}]
    assert r["fabric"]["total_nodes"] == 24 and r["fabric"]["ib_switches"] == 4
    assert r["fabric"]["ib_channel_adapters"] == 16 and r["fabric"]["ib_aggregation_nodes"] == 4
    assert r["fabric"]["number_of_ll_aggregation_trees"] == 2 and r["fabric"]["unique_job_ids"] == 1024


CASES.update(
    {
        (
            "ibdiagnet-pc",
            "ibdiagnet2-rail_validation-Rail-Optimized-Topology-Validation-finished-successfully-section.txt",
        ): _rail_validation_section,
        (
            "ibdiagnet-pc",
            "ibdiagnet2-sharp-check-trees-Fabric-Summary-24-nodes-4-switches-4-aggregation-nodes-"
            "LL-trees.txt",
        ): _sharp_fabric_summary,
    }
)


def test_failed_check_is_not_ok():
    out = (
        "-E- Rail Optimized Topology Validation finished with errors\n"
        "-I- Stage                     Warnings   Errors     Comment\n"
        "-I- Rail Validation           0          3\n"
    )
    r = parse("ibdiagnet", out)
    assert r["checks"][0]["ok"] is False and r["errors"] == 3


@fixture_cases(CASES)
def test_fixture(directory, name, check):
    check(parsed(directory, name))
