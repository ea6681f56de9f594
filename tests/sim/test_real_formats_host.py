"""Every host-side tool the simulator prints, against a real output of the same
tool (fixtures/real-outputs, found through tests/parsers_host/helpers): the same
header lines, field names and layout; values differ. Real hardware is the
oracle: a difference here is a simulator bug.

Tools: nvidia-smi (table, -q, topo -m, --query-gpu csv), lspci -vv, numactl -H,
ofed_info -s, modinfo, dmidecode -t memory, ib_write_bw (-D), nccl-tests,
systemctl status irqbalance, tuned-adm active."""

from __future__ import annotations

import asyncio
import re

import pytest

from tests.parsers_host.helpers import fixtures_root


def real(glob: str) -> str:
    folder, pattern = glob.split("/", 1)
    found = sorted((fixtures_root() / folder).glob(pattern))
    assert found, f"no real fixture {glob}"
    return found[0].read_text(encoding="utf-8")


def shape(line: str) -> str:
    """A line's layout: every run of value characters becomes 'w', spacing kept."""
    return re.sub(r"[\w.:;/()+,\-%]+", "w", line.expandtabs())


def keys(text: str, sep: str = ":") -> list[tuple[int, str]]:
    """(indent, key) of every 'key : value' / section line, in order."""
    out = []
    for line in text.expandtabs().splitlines():
        if not line.strip():
            continue
        key = line.split(sep, 1)[0].rstrip() if sep in line else line.rstrip()
        out.append((len(line) - len(line.lstrip()), key.strip()))
    return out


@pytest.fixture
def gpu01(machine_of):
    return machine_of(2)("gpu01")


async def test_nvidia_smi_table_frame_and_labels(gpu01, sh):
    out, _, code = await sh(gpu01, "nvidia-smi")
    theirs = real("nvidia-smi/1xL40S-driver550*").splitlines()
    ours = out.splitlines()
    assert code == 0
    top = lambda lines: lines[next(i for i, x in enumerate(lines) if x.startswith("+-")) :]
    ours, theirs = top(ours), top(theirs)
    # frame and column labels identical; the version line and the GPU rows in the same layout
    assert ours[2:7] == theirs[2:7] and ours[0] == theirs[0]
    assert [shape(x) for x in ours[7:11]] == [shape(x) for x in theirs[7:11]]
    fields = lambda line: (
        [line.index(k) for k in ("NVIDIA-SMI ", "Driver Version: ", "CUDA Version: ")] + [len(line)]
    )
    assert fields(ours[1]) == fields(theirs[1])
    proc = lambda lines: lines[next(i for i, x in enumerate(lines) if "Processes:" in x) - 1 :][:6]
    assert [x.rstrip() for x in proc(ours)] == [x.rstrip() for x in proc(theirs)]


async def test_nvidia_smi_q_same_keys_indents_and_column(gpu01, sh):
    out, _, code = await sh(gpu01, "nvidia-smi -q -i 0")
    theirs = real("nvidia-smi-q/1xL40S-*")
    assert code == 0 and keys(out) == keys(theirs)
    colon = lambda t: {x.index(" : ") for x in t.splitlines() if " : " in x}
    assert colon(out) == colon(theirs) == {41}
    # the idle GPU: current generation 1 of max 4, as the real idle L40S
    pci = out.split("PCIe Generation")[1]
    assert re.search(r"Max\s+: 4\n\s+Current\s+: 1\n", pci)


async def test_nvidia_smi_topo_legend_and_header(gpu01, sh):
    out, _, code = await sh(gpu01, "nvidia-smi topo -m")
    theirs = real("nvidia-smi-topo-m/4xRTX6000Ada-*")
    assert code == 0
    legend = lambda t: [x.strip() for x in t.split("Legend:")[1].splitlines() if x.strip()][:9]
    assert legend(out) == legend(theirs)
    head = lambda t: t.splitlines()[0].split()
    ours, real_head = head(out), head(theirs)
    assert [w for w in ours if not re.fullmatch(r"(GPU|NIC)\d+", w)] == [
        w for w in real_head if not re.fullmatch(r"(GPU|NIC)\d+", w)
    ]
    nic_legend = lambda t: [x for x in t.split("NIC Legend:")[1].splitlines() if x.strip()]
    assert all(re.fullmatch(r"  NIC\d+: mlx5_\d+", x) for x in nic_legend(out))
    assert all(re.fullmatch(r"  NIC\d+: mlx5_\d+", x) for x in nic_legend(theirs))


async def test_nvidia_smi_query_gpu_csv(gpu01, sh):
    out, _, code = await sh(gpu01, "nvidia-smi --query-gpu=driver_version,name,compute_cap --format=csv")
    theirs = real("nvidia-smi-query-gpu-csv/7xB300-*").splitlines()
    ours = out.splitlines()
    assert code == 0 and ours[0] == theirs[0]
    assert all(len(x.split(", ")) == 3 for x in ours[1:] + theirs[1:])
    # units in the header ("utilization.gpu [%]") and after each value ("26 %"), as the real tool
    out, _, _ = await sh(
        gpu01, "nvidia-smi --query-gpu=index,temperature.gpu,utilization.gpu,pstate,power.draw --format=csv"
    )
    theirs = real("nvidia-smi-query-gpu-csv/1xGPU-*").splitlines()
    assert out.splitlines()[0] == "index, temperature.gpu, utilization.gpu [%], pstate, power.draw [W]"
    assert theirs[0].startswith("index, temperature.gpu, utilization.gpu [%], ")
    assert re.fullmatch(r"\d+, \d+, \d+ %, P\d+, \d+\.\d\d W", out.splitlines()[1])
    assert re.fullmatch(r"\d+, \d+, \d+ %, .*, P\d+, \d+\.\d\d W, .*", theirs[1])


async def test_lspci_vv_gpu_link_lines(gpu01, sh):
    out, _, code = await sh(gpu01, "lspci -vv -d 10de: -s 19:00.0")
    theirs = real("lspci-vv/RTX6000Ada-*")
    assert code == 0
    pick = lambda t, k: next(x for x in t.splitlines() if x.strip().startswith(k))
    for k in ("LnkCap:", "LnkSta:", "LnkCap2:", "LnkCtl2:", "Kernel driver in use:"):
        ours, real_line = pick(out, k).expandtabs(), pick(theirs, k).expandtabs()
        assert ours[: ours.index(k)] == real_line[: real_line.index(k)], k  # the same indentation
    # idle: 2.5GT/s (downgraded), x16; lspci writes a TAB after the key (the paste expanded it)
    assert pick(out, "LnkSta:").expandtabs() == pick(theirs, "LnkSta:").expandtabs()
    assert shape(pick(out, "LnkCap:")).split(" w")[:4] == shape(pick(theirs, "LnkCap:")).split(" w")[:4]


async def test_numactl_hardware(gpu01, sh):
    out, _, code = await sh(gpu01, "numactl -H")
    theirs = real("numactl-H/2node-AMD-Genoa-*")
    assert code == 0
    kinds = lambda t: [re.sub(r"\d+", "N", x).split(":")[0] for x in t.splitlines() if x.strip()]
    assert [k for k in kinds(out)] == [k for k in kinds(theirs)]


async def test_ofed_info_s(gpu01, sh):
    out, _, _ = await sh(gpu01, "ofed_info -s")
    theirs = real("ofed_info-s/MLNX_OFED-23.07-0.5.1.2-colon.txt")
    pattern = r"MLNX_OFED_LINUX-\d+\.\d+-\d+\.\d+\.\d+\.\d+:\n"
    assert re.fullmatch(pattern, out) and re.fullmatch(pattern, theirs)


async def test_modinfo_field_names_in_order(gpu01, sh):
    out, _, code = await sh(gpu01, "modinfo mlx5_core")
    theirs = real("modinfo-mlx5_core/MLNX_OFED-24.01-0.3.3-Debian12-*")
    first = lambda t: [k for _, k in keys(t)][:8]
    assert code == 0
    squash = lambda ks: [k for i, k in enumerate(ks) if i == 0 or k != ks[i - 1]]
    assert squash(first(out)) == squash(first(theirs))
    assert {x.index(x.split(":", 1)[1].strip()) for x in out.splitlines()[:6]} == {16}
    assert {x.index(x.split(":", 1)[1].strip()) for x in theirs.splitlines()[:6]} == {16}


async def test_dmidecode_memory_device_block(gpu01, sh):
    out, _, code = await sh(gpu01, "dmidecode -t memory")
    theirs = real("dmidecode-t-memory/Server-Micron-*")
    block = lambda t: t[t.index("Memory Device") :].split("\n\n")[0]
    assert code == 0
    assert [k for k in keys(block(out))] == [k for k in keys(block(theirs))]


async def test_ib_write_bw_duration_layout(machine_of, sh):
    get = machine_of(2)
    server = asyncio.ensure_future(sh(get("gpu02"), "ib_write_bw -d mlx5_0 --report_gbits -D 5"))
    await asyncio.sleep(0.2)
    out, _, code = await sh(get("gpu01"), "ib_write_bw -d mlx5_0 --report_gbits -D 5 gpu02")
    served, _, _ = await server
    theirs = real("ib_write_bw/ib_send_bw-bidirectional-*duration*")
    assert code == 0
    settings = lambda t: [shape(x) for x in t.splitlines() if re.match(r" [A-Z][\w .*-]+:", x)]
    assert settings(out)[:4] == settings(theirs)[:4]
    row = lambda t: t.splitlines()[-2]
    starts = lambda line: [m.start() for m in re.finditer(r"\S+", line)]
    assert starts(row(out)) == starts(row(theirs))
    assert served.splitlines()[1:3] == ["*" * 36, "* Waiting for client to connect... *"]


async def test_nccl_tests_header_and_columns(gpu01, sh):
    out, _, code = await sh(gpu01, "all_reduce_perf -b 8G -e 8G -f 2 -g 8")
    theirs = real("nccl-tests/2pod-4xL40S-*").splitlines()
    ours = out.splitlines()
    assert code == 0
    at = lambda lines: lines.index(next(x for x in lines if "out-of-place" in x))
    assert ours[at(ours) : at(ours) + 3] == theirs[at(theirs) : at(theirs) + 3]
    first = lambda lines: next(x for x in lines if x.startswith("# nThread"))
    assert [w for w in first(ours).split() if not w[0].isdigit()] == [
        w for w in first(theirs).split() if not w[0].isdigit()
    ]


async def test_systemctl_status_irqbalance_running_and_stopped(gpu01, sh):
    out, _, code = await sh(gpu01, "systemctl status irqbalance")
    theirs = real("irqbalance/OpenShift-*")
    nodigits = lambda t: [(i, re.sub(r"\d+", "N", k)) for i, k in keys(t)]
    assert code == 0 and nodigits(out) == nodigits(theirs)
    assert out.splitlines()[0] == theirs.splitlines()[0]
    await sh(gpu01, "systemctl disable --now irqbalance")
    out, _, code = await sh(gpu01, "systemctl status irqbalance")
    theirs = real("irqbalance/RHEL9-*")
    assert code == 3 and out == theirs.rstrip("\n") + "\n"


async def test_tuned_adm_active(gpu01, sh):
    out, _, _ = await sh(gpu01, "tuned-adm active")
    theirs = real("tuned/CentOS7-*")
    pattern = r"Current active profile: [\w-]+\n"
    assert re.fullmatch(pattern, out) and re.fullmatch(pattern, theirs)
