"""The project's own parsers (runbook.parsers) read what the simulator prints, and
the parsed records carry the simulated state. Each test skips, saying why, only
while its parser is not registered yet. The record schemas belong to the parser
authors, so the checks look for the state's values anywhere in the record."""

import pytest

from runbook.sim import ibformat


def parser_or_skip(name: str):
    from runbook import parsers

    try:
        return parsers.get(name)
    except KeyError:
        pytest.skip(f"parser {name!r} is not registered in runbook.parsers yet")


def flat(record) -> set[str]:
    """Every key and scalar value of a parsed record, as text (numbers also as ints)."""
    out: set[str] = set()

    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                out.add(str(k))
                walk(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)
        else:
            out.add(str(x))
            if isinstance(x, float) and x.is_integer():
                out.add(str(int(x)))

    walk(record)
    return out


def expected(machine, name: str) -> tuple[str, set[str]]:
    """(command, values the parsed record must contain) for a compliant gpu01 / sm01."""
    node = machine.state
    fab = machine.cluster.fabric
    nic = node.nics[0]
    st = fab.status(node, nic)
    return {
        "nvidia-smi-topo": ("nvidia-smi topo -m", {"PIX", "PXB", "SYS", "mlx5_0", "mlx5_6", "0-31,64-95"}),
        "nvidia-smi": ("nvidia-smi", {node.versions["driver"], node.versions["cuda"], "NVIDIA L40S"}),
        "nvidia-smi-csv": (
            "nvidia-smi --query-gpu=index,name,pcie.link.width.current --format=csv,noheader,nounits",
            {"NVIDIA L40S", "16", "7"},
        ),
        "mlxconfig": ("mst start >/dev/null; mlxconfig -d mlx5_0 q LINK_TYPE_P1", {"LINK_TYPE_P1", "IB(1)"}),
        "ibstat": ("ibstat", {"mlx5_0", "Active", "InfiniBand", str(st.lid), str(st.sm_lid), "200"}),
        "ibstatus": ("ibstatus", {"mlx5_0", "InfiniBand"}),
        "ibv_devinfo": ("ibv_devinfo", {"mlx5_0", "PORT_ACTIVE", str(st.lid), ibformat.FW}),
        "ofed_info": ("ofed_info -s", {node.versions["ofed"]}),
        "modinfo": ("modinfo mlx5_core", {node.versions["ofed_kernel"], "mlx5_core"}),
        "lspci-vv": ("lspci -vv -d 10de:", {"16GT/s", "2.5GT/s"}),
        "lspci": ("lspci", {"Mellanox Technologies"}),
        "dmidecode-memory": ("dmidecode -t memory", {"64 GB", "DDR4"}),
        "numactl": ("numactl -H", {"0", "1"}),
        "iblinkinfo": ("iblinkinfo", {"gpu01.seed-dc.internal mlx5_0"}),  # rdma-ndd: the FQDN
        "ibnetdiscover": ("ibnetdiscover", {"gpu01.seed-dc.internal mlx5_0"}),
        "nccl-tests": ("all_reduce_perf -b 1G -e 8G -f 2 -g 8", {"8589934592"}),
        "ib_write_bw": (
            "ib_write_bw -d mlx5_0 --report_gbits -D 2 > /tmp/s 2>&1 & "
            "until ib_write_bw -d mlx5_0 --report_gbits -D 2 localhost 2>/dev/null; do sleep 0.1; done",
            {"65536"},
        ),
        "chronyc-tracking": ("chronyc tracking", {"Normal"}),
        "mst-status": ("mst start >/dev/null; mst status -v", {"mlx5_0", "ConnectX6(rev:0)"}),
    }[name]


@pytest.mark.parametrize(
    "name",
    [
        "nvidia-smi-topo",
        "nvidia-smi",
        "nvidia-smi-csv",
        "mlxconfig",
        "ibstat",
        "ibstatus",
        "ibv_devinfo",
        "ofed_info",
        "modinfo",
        "lspci-vv",
        "lspci",
        "dmidecode-memory",
        "numactl",
        "iblinkinfo",
        "ibnetdiscover",
        "nccl-tests",
        "ib_write_bw",
        "chronyc-tracking",
        "mst-status",
    ],
)
async def test_compute_node_outputs_parse(machine_of, sh, name):
    parse = parser_or_skip(name)
    gpu01 = machine_of(2)("gpu01")
    command, values = expected(gpu01, name)
    out, err, code = await sh(gpu01, command)
    assert code == 0, err
    found = flat(parse(out))
    missing = {v for v in values if v not in found and not any(v in f for f in found)}
    assert not missing, f"{name}: parsed record lacks {missing}"


async def test_sm_outputs_parse(machine_of, sh):
    get = machine_of(2)
    sm01 = get("sm01")
    parse = parser_or_skip("sminfo")
    out, _, code = await sh(sm01, "sminfo")
    assert code == 0 and {"1", "15"} <= flat(parse(out))
    parse = parser_or_skip("partitions-conf")
    out, _, _ = await sh(sm01, "cat /etc/opensm/partitions.conf")
    values = flat(parse(out))
    assert {"compute", "storage"} <= values
    assert f"0x{get('gpu01').state.nics[0].guid:016x}" in {v.lower() for v in values}


async def test_faults_show_in_parsed_records(machine_of, sh):
    """The same parsers see the faults: an ETH port, a x8 link, another OFED."""
    get = machine_of(2, {"gpu01": ["link_type_eth", "pcie_x8", "ofed_version_drift"]})
    gpu01 = get("gpu01")
    out, _, _ = await sh(gpu01, "ibstat mlx5_0")
    assert "Ethernet" in flat(parser_or_skip("ibstat")(out))
    out, _, _ = await sh(gpu01, "lspci -vv -s " + gpu01.state.gpus[2].bus)
    assert {"8", "x8"} & flat(parser_or_skip("lspci-vv")(out))
    out, _, _ = await sh(gpu01, "ofed_info -s")
    assert gpu01.state.versions["ofed"] in flat(parser_or_skip("ofed_info")(out))
