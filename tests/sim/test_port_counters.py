"""Port error counters in the simulator: a marginal cable (cable_ber) counts on both
ends of its link, and every tool that reads the counters says so: perfquery of
either end, ibqueryerrors -r, ibdiagnet's PM_INFO table. A healthy fabric reads 0."""

from __future__ import annotations

from runbook import parsers

SWEEP = (
    "d=/var/tmp/fh; if command -v ibdiagnet >/dev/null 2>&1; then ibdiagnet -o $d >/dev/null; "
    "awk '/^START_(NODES|LINKS|PM_INFO)$/ {p=1} p {print} /^END_/ {p=0}' $d/ibdiagnet2.db_csv; "
    "else ibqueryerrors -r; fi"
)


async def test_perfquery_reads_both_ends_of_the_marginal_link(machine_of, sh):
    get = machine_of(2, {"gpu01": [{"cable_ber": "mlx5_2"}]})
    nic = get("gpu01").state.nic("mlx5_2")
    leaf, port = nic.cable
    sw = get("gpu01").cluster.fabric.switches[leaf]
    hca = parsers.parse("perfquery", (await sh(get("gpu01"), "perfquery -C mlx5_2 -P 1"))[0])
    switch = parsers.parse("perfquery", (await sh(get("sm01"), f"perfquery {sw.lid} {port}"))[0])
    other = parsers.parse("perfquery", (await sh(get("gpu02"), "perfquery -C mlx5_2 -P 1"))[0])
    for r in (hca, switch):
        assert r["SymbolErrorCounter"] == 4873 and r["LinkErrorRecoveryCounter"] == 3
    assert switch["lid"] == sw.lid and switch["port"] == port
    assert other["errors_total"] == 0
    out, err, status = await sh(get("sm01"), "perfquery 999 1")
    assert status != 0 and "iberror" in err  # no such LID


async def test_the_sweep_names_both_ends_with_and_without_ibdiagnet(machine_of, sh):
    for faults, source in (({}, "ibdiagnet"), ({"sm01": ["no_ibdiagnet"]}, "ibqueryerrors")):
        get = machine_of(2, {"gpu02": [{"cable_ber": "mlx5_0"}], **faults})
        out, _, status = await sh(get("sm01"), SWEEP)
        r = parsers.parse("fabric-port-errors", out)
        assert status == 0 and r["source"] == source
        ends = {(e["node"], e["port"], (e["remote"] or {}).get("name")) for e in r["errors"]}
        assert ends == {
            ("gpu02.seed-dc.internal mlx5_0", 1, "MF0;leaf01:MQM9700/U1"),
            ("MF0;leaf01:MQM9700/U1", 2, "gpu02.seed-dc.internal mlx5_0"),
        }, ends
        healthy = parsers.parse(
            "fabric-port-errors", (await sh(machine_of(2, faults or None)("sm01"), SWEEP))[0]
        )
        assert healthy["errors"] == [] and healthy["clean"]
        assert healthy["summary"]["nodes_checked"] == r["summary"]["nodes_checked"] > 20


async def test_ibdiagnet_counts_the_errors_in_its_summary(machine_of, sh):
    get = machine_of(2, {"gpu01": ["cable_ber"]})
    r = parsers.parse("ibdiagnet", (await sh(get("sm01"), "ibdiagnet"))[0])
    assert r["by_stage"]["Port Counters"] == {"errors": 4, "warnings": 0}  # 2 counters x 2 ends
    assert r["fabric"]["ib_switches"] == 9
    assert "/var/tmp/ibdiagnet2/ibdiagnet2.db_csv" in get("sm01").state.files


async def test_saquery_node_records_read_like_the_real_one(machine_of, sh):
    get = machine_of(2)
    nic = get("gpu01").state.nic("mlx5_2")
    lid = get("gpu01").cluster.fabric.lid_of[("gpu01", "mlx5_2")]
    one = parsers.parse("saquery", (await sh(get("gpu02"), f"saquery {lid}"))[0])
    assert one["type"] == "NodeRecord" and one["lid"] == lid and one["node_type"] == "Channel Adapter"
    assert (
        one["port_guid"] == f"0x{nic.guid:016x}" and one["NodeDescription"] == "gpu01.seed-dc.internal mlx5_2"
    )
    every = parsers.parse("saquery", (await sh(get("gpu02"), "saquery"))[0])
    assert every["count"] == 2 * 7 + 2 + 9  # 7 HCA functions per compute node, 2 SM nodes, 9 switches
