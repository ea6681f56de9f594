"""The simulated tools print the real tools' layouts: compared line for line with
the real outputs in shared/fixtures/real-outputs (values differ, layout must not)."""

import asyncio
import re

import pytest

from tests.fixtures_path import configured  # the one fixture locator

FIXTURES = configured()

needs_fixtures = pytest.mark.skipif(not FIXTURES.is_dir(), reason="shared/fixtures/real-outputs not found")


def fixture(rel: str) -> str:
    return next((FIXTURES / rel.split("/")[0]).glob(rel.split("/")[1])).read_text()


@pytest.fixture
def node(machine_of):
    get = machine_of(2)
    return get("gpu01")


def starts(line: str, pattern: str = r"\S+") -> list[int]:
    """Columns where the fields of a line start (for right/left-aligned tables)."""
    return [m.start() for m in re.finditer(pattern, line)]


def shape(line: str) -> str:
    """A line with its values blanked: letters/digits runs -> 'w', spacing kept."""
    return re.sub(r"[\w.:;/()+,\-]+", "w", line)


@needs_fixtures
async def test_topo_matrix_layout(node, sh):
    out, _, _ = await sh(node, "nvidia-smi topo -m")
    real = fixture("nvidia-smi-topo-m/8xRTX5090*")
    legend = lambda t: t[t.index("\nLegend:") : t.index("NIC Legend:")]
    assert legend(out) == legend(real)
    ours, theirs = out.splitlines(), real.splitlines()
    assert ours[0].startswith(" " * 8 + "GPU0    GPU1") and ours[0].endswith(
        "CPU Affinity    NUMA Affinity   GPU NUMA ID"
    )
    # a GPU row: 8-wide cells, the self cell " X      ", CPU affinity padded to a tab stop, 16-wide NUMA
    assert re.fullmatch(r"GPU0     X      (\S+ +){14}0-31,64-95      0               N/A", ours[1])
    assert re.fullmatch(r"GPU0     X      (\S+ +){9}0-127,256-383   0               N/A", theirs[1])
    legend_at = ours.index("NIC Legend:")
    assert ours[legend_at:] == ["NIC Legend:", ""] + [f"  NIC{i}: mlx5_{i}" for i in range(7)]
    assert theirs[theirs.index("NIC Legend:") :] == ["NIC Legend:", "", "  NIC0: mlx5_0", "  NIC1: mlx5_1"]


@needs_fixtures
async def test_nvidia_smi_table_layout(node, sh):
    out, _, _ = await sh(node, "nvidia-smi")
    real = fixture("nvidia-smi/1xL40S*").splitlines()
    ours = out.splitlines()[1:]  # ours starts with the timestamp line, as nvidia-smi does
    assert [len(x) for x in ours[:11]] == [len(x) for x in real[:11]]
    for i in (0, 2, 3, 4, 5, 6, 10):
        assert ours[i] == real[i]
    assert [shape(x) for x in ours[6:10]] == [shape(x) for x in real[6:10]]
    assert ours[-8:] == real[-8:]  # blank spacer line and the Processes block


@needs_fixtures
async def test_mlxconfig_query_and_set_layout(node, sh):
    out, _, _ = await sh(node, "mst start >/dev/null; mlxconfig -d mlx5_0 q LINK_TYPE_P1")
    real = fixture("mlxconfig/CX5-MCX555A*").splitlines()
    ours = out.splitlines()
    assert ours[1:4] == ["Device #1:", "----------", ""]
    assert ours[-2].index("Next Boot") == real[8].index("Next Boot")
    assert ours[-1] == "        LINK_TYPE_P1                                IB(1)"
    assert next(x for x in real if "LINK_TYPE_P1" in x) == ours[-1]
    out, _, code = await sh(node, "mlxconfig -y -d mlx5_0 set LINK_TYPE_P1=2")
    real = fixture("mlxconfig/CX6-MCX654106A*").splitlines()
    ours = out.splitlines()
    assert code == 0
    assert [shape(x) for x in ours[8:]] == [shape(x) for x in real[8:9] + real[9:10] + real[11:]]
    assert ours[9] == real[9]


@needs_fixtures
async def test_ibstat_ibstatus_ibv_devinfo_layout(node, sh):
    out, _, _ = await sh(node, "ibstat mlx5_0")
    real = fixture("ibstat/ConnectX-3*")
    key = lambda t: [re.sub(r":.*", ":", x) for x in t.splitlines()]
    assert key(out)[1:] == key(real)[1:] and key(out)[0] == "CA 'mlx5_0'"
    out, _, _ = await sh(node, "ibstatus mlx5_0")
    real = fixture("ibstatus/gpud-testdata*").split("\n\n")[0]
    # ibstatus is a script: "\tkey:\t value"; after tab expansion every value starts at column 25
    assert [x[:25].split(":")[0] for x in out.expandtabs().splitlines() if x] == [
        x[:25].split(":")[0] for x in real.splitlines()
    ]
    assert all(x[24] == " " and x[25] != " " for x in out.expandtabs().splitlines()[1:8])
    assert all(x[24] == " " and x[25] != " " for x in real.splitlines()[1:8])
    out, _, _ = await sh(node, "ibv_devinfo -d mlx5_0")
    real = fixture("ibv_devinfo/ConnectX-6*")
    strip_values = lambda t: [re.sub(r"(:\t+).*", r"\1", x) for x in t.splitlines() if x]
    assert strip_values(out) == strip_values(real)


@needs_fixtures
async def test_lspci_vv_link_lines_and_grep(node, sh):
    out, _, _ = await sh(node, "lspci -vv -d 10de: -s 19:00.0")
    real = fixture("lspci-vv/RTX6000Ada*")
    pick = lambda t, k: next(x for x in t.expandtabs().splitlines() if x.strip().startswith(k))
    for k in ("LnkCap:", "LnkSta:", "NUMA node:", "Kernel driver in use:"):
        assert shape(pick(out, k)).split(" w")[0] == shape(pick(real, k)).split(" w")[0]
    # an idle GPU: 2.5GT/s, marked downgraded, full width - as the real idle AD102 capture
    assert pick(out, "LnkSta:").strip() == "LnkSta: Speed 2.5GT/s (downgraded), Width x16"
    assert pick(out, "LnkSta:").strip() == pick(real, "LnkSta:").strip()
    out, _, _ = await sh(node, "lspci | grep -i mellanox")
    # the seed's rail NICs are ConnectX-7, its storage cards ConnectX-6 (inventory `hca:`)
    assert re.match(
        r"18:00\.0 Infiniband controller: Mellanox Technologies MT2910 Family \[ConnectX-7\]\n", out
    )
    assert "2c:00.0 Infiniband controller: Mellanox Technologies MT28908 Family [ConnectX-6]\n" in out
    out, _, _ = await sh(node, "lspci -nn | grep NVIDIA | head -1")
    assert out.endswith("3D controller [0302]: NVIDIA Corporation AD102GL [L40S] [10de:26b9] (rev a1)\n")


@needs_fixtures
async def test_fabric_tool_layouts(machine_of, sh):
    get = machine_of(2)
    node = get("gpu01")
    out, _, _ = await sh(node, "iblinkinfo")
    real = fixture("iblinkinfo/MQM8700*").splitlines()
    ca_line = next(x for x in out.splitlines() if x.startswith("      0x"))
    marks = r"\[  \]|==\(|\)==>|Gbps|Active/|\""
    assert starts(ca_line, marks)[:7] == starts(real[1], marks)[:7]  # up to the peer's name
    sw_line = next(
        x
        for x in out.splitlines()
        if x.startswith("  ") and "gpu01.seed-dc.internal mlx5_0" in x and not x.startswith("      0x")
    )
    assert starts(sw_line, marks)[:7] == starts(real[9], marks)[:7]
    down = next(x for x in out.splitlines() if "Down/ Polling" in x)
    real_down = next(x for x in fixture("iblinkinfo/QDR*").splitlines() if "Down/ Polling" in x)
    # same columns for the marks (the port number is right-aligned, its digits differ)
    assert starts(down, marks + r"|Down/|\( \)") == starts(real_down, marks + r"|Down/|\( \)")
    out, _, _ = await sh(node, "sminfo")
    assert shape(out) == shape(fixture("sminfo/ibsim*"))
    out, _, _ = await sh(node, "ibswitches | head -1")
    assert shape(out).replace("enhanced", "w") == shape(
        fixture("ibswitches/*").splitlines()[0] + "\n"
    ).replace("base", "w")


@needs_fixtures
async def test_host_tool_layouts(node, sh):
    out, _, _ = await sh(node, "numactl -H")
    real = fixture("numactl-H/2node-AMD*")
    cpus = re.compile(r"node \d cpus:( \d+)+")
    assert [cpus.fullmatch(x) is not None for x in out.splitlines()] == [
        cpus.fullmatch(x) is not None for x in real.splitlines()
    ]
    assert [shape(x) for x in out.splitlines() if not cpus.match(x)] == [
        shape(x) for x in real.splitlines() if not cpus.match(x)
    ]
    out, _, _ = await sh(node, "dmidecode -t memory")
    real_keys = {
        x.split(":")[0] for x in fixture("dmidecode-t-memory/Server*").splitlines() if x.startswith("\t")
    }
    block = out.split("\n\n")[2]
    assert block.startswith("Handle 0x1100, DMI type 17") and real_keys <= {
        x.split(":")[0] for x in block.splitlines()
    }
    out, _, _ = await sh(node, "modinfo mlx5_core")
    real = fixture("modinfo-mlx5_core/*full*")
    assert all(
        re.match(r"[a-z_]+:\s+", x) and len(re.match(r"[a-z_]+:\s+", x).group(0)) == 16
        for x in out.splitlines()
    )
    assert len(re.match(r"\w+:\s+", real).group(0)) == 16
    out, _, _ = await sh(node, "ofed_info -s")
    assert shape(out) == shape(fixture("ofed_info-s/MLNX_OFED-23.07*"))
    out, _, _ = await sh(node, "mst start > /dev/null; mst status -v")
    real = fixture("mst-status-v/H100*").splitlines()
    assert out.splitlines()[:7] == real[:7]


@needs_fixtures
async def test_benchmark_layouts(machine_of, sh):
    get = machine_of(2)
    node = get("gpu01")
    out, _, code = await sh(node, "all_reduce_perf -b 8 -e 8G -f 2 -g 8")
    real = fixture("nccl-tests/2pod*").splitlines()
    ours = out.splitlines()
    assert code == 0
    start = ours.index(next(x for x in ours if "out-of-place" in x))
    rstart = real.index(next(x for x in real if "out-of-place" in x))
    assert ours[start : start + 3] == real[rstart : rstart + 3]
    assert shape(ours[start + 3]) == shape(real[rstart + 3])
    assert ours[-3] == "# Out of bounds values : 0 OK" and ours[-2].startswith("# Avg bus bandwidth    : ")
    peer = node.peer("gpu02")
    server = asyncio.ensure_future(sh(peer, "ib_write_bw -d mlx5_0 --report_gbits"))
    await asyncio.sleep(0.3)
    out, _, code = await sh(node, "ib_write_bw -d mlx5_0 --report_gbits gpu02")
    real = fixture("ib_write_bw/DGX*").splitlines()
    ours = out.splitlines()
    # the title line keeps perftest's TABs (the DGX paste expanded them)
    assert code == 0 and ours[0] == real[0] and ours[1].expandtabs() == real[1]
    assert ours[-3] == real[-3] and starts(ours[-2].expandtabs()) == starts(real[-2])
    served, _, code = await server
    real = fixture("ib_write_bw/ib_send_bw-bidirectional*duration*").splitlines()
    assert code == 0 and served.splitlines()[:3] == ["", "*" * 36, "* Waiting for client to connect... *"]
    # -D: the duration layout (peak 0.00, average after one space, rate at column 61)
    out, _, code = await sh(node, "ib_write_bw -d mlx5_0 --report_gbits -D 5 gpu02")
    assert code == 1 and out == ""  # nobody listens on gpu02 any more: refused
    server = asyncio.ensure_future(sh(peer, "ib_write_bw -d mlx5_0 --report_gbits -D 5"))
    await asyncio.sleep(0.3)
    out, _, code = await sh(node, "ib_write_bw -d mlx5_0 --report_gbits -D 5 gpu02")
    await server
    ours = out.splitlines()
    assert code == 0 and ours[1] == real[1].replace("Send Bidirectional", "RDMA_Write")
    assert starts(ours[-2]) == starts(real[-2]) and ours[-2].split()[2] == "0.00"
