"""The shipped steps' verify criteria judged end to end (parse, per-host and
fleet verdicts, as the engine does) on realistic outputs: pass only on the
evidence, fail naming expected vs found, unknown when the output is unreadable."""

from __future__ import annotations

from runbook.definition.model import Status

from .helpers import judge, seed_vars

V = seed_vars("gpu01")
MIRROR = V["repo_mirror"]
REPOS = (
    f"/etc/yum.repos.d/seed-dc.repo:[baseos]\n"
    f"/etc/yum.repos.d/seed-dc.repo:name=Site mirror - BaseOS\n"
    f"/etc/yum.repos.d/seed-dc.repo:baseurl={MIRROR}rocky/9/BaseOS/x86_64/os/\n"
    f"/etc/yum.repos.d/seed-dc.repo:enabled=1\n"
    f"/etc/yum.repos.d/seed-dc.repo:\n"
    f"/etc/yum.repos.d/seed-dc.repo:[mlnx_ofed]\n"
    f"/etc/yum.repos.d/seed-dc.repo:baseurl={MIRROR}mlnx_ofed/rhel9/x86_64/\n"
    f"global.index-url='{MIRROR}pypi/simple/'\n"
)
# the distribution's own file, every section disabled: no source
STOCK = (
    "/etc/yum.repos.d/rocky.repo:[baseos]\n"
    "/etc/yum.repos.d/rocky.repo:name=Rocky Linux $releasever - BaseOS\n"
    "/etc/yum.repos.d/rocky.repo:mirrorlist=https://mirrors.rockylinux.org/mirrorlist?arch=$basearch&repo=BaseOS-$releasever$rltype\n"
    "/etc/yum.repos.d/rocky.repo:#baseurl=http://dl.rockylinux.org/$contentdir/$releasever/BaseOS/$basearch/os/\n"
    "/etc/yum.repos.d/rocky.repo:gpgcheck=1\n"
    "/etc/yum.repos.d/rocky.repo:enabled=0\n"
)


def status(verdicts, host="gpu01"):
    return verdicts[host].status


def test_mirror_only():
    assert status(judge("mirror-only", {"gpu01": REPOS})) == Status.PASS
    external = REPOS + (
        "/etc/yum.repos.d/cuda-rhel9.repo:[cuda-rhel9-x86_64]\n"
        "/etc/yum.repos.d/cuda-rhel9.repo:baseurl="
        "https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64\n"
    )
    v = judge("mirror-only", {"gpu01": external})["gpu01"]
    assert v.status == Status.FAIL and "developer.download.nvidia.com" in v.reason
    no_pip = REPOS.replace(f"global.index-url='{MIRROR}pypi/simple/'\n", "")
    assert status(judge("mirror-only", {"gpu01": no_pip})) == Status.FAIL
    pip_out = REPOS + "global.extra-index-url='https://pypi.org/simple'\n"
    v = judge("mirror-only", {"gpu01": pip_out})["gpu01"]
    assert v.status == Status.FAIL and "https://pypi.org/simple" in v.reason


def test_mirror_only_ignores_disabled_sections_and_judges_enabled_ones():
    assert status(judge("mirror-only", {"gpu01": STOCK + REPOS})) == Status.PASS
    enabled = STOCK.replace("enabled=0", "enabled=1")
    v = judge("mirror-only", {"gpu01": enabled + REPOS})["gpu01"]
    assert v.status == Status.FAIL and "rocky.repo [baseos] enabled, points outside" in v.reason
    # no enabled= line: dnf's default is enabled
    v = judge("mirror-only", {"gpu01": STOCK.replace("/etc/yum.repos.d/rocky.repo:enabled=0\n", "") + REPOS})
    assert v["gpu01"].status == Status.FAIL


def test_mirror_only_apt_sources_list_and_deb822():
    apt = (
        f"/etc/apt/sources.list:deb [arch=amd64] {MIRROR}ubuntu jammy main restricted\n"
        "/etc/apt/sources.list:# deb http://archive.ubuntu.com/ubuntu jammy universe\n"
        "/etc/apt/sources.list.d/ubuntu.sources:Types: deb\n"
        "/etc/apt/sources.list.d/ubuntu.sources:URIs: http://archive.ubuntu.com/ubuntu\n"
        "/etc/apt/sources.list.d/ubuntu.sources:Suites: noble noble-updates\n"
        "/etc/apt/sources.list.d/ubuntu.sources:Components: main\n"
        "/etc/apt/sources.list.d/ubuntu.sources:Enabled: no\n"
        f"global.index-url='{MIRROR}pypi/simple/'\n"
    )
    assert status(judge("mirror-only", {"gpu01": apt})) == Status.PASS
    v = judge("mirror-only", {"gpu01": apt.replace("Enabled: no", "Enabled: yes")})["gpu01"]
    assert v.status == Status.FAIL and "ubuntu.sources [stanza 1] enabled" in v.reason
    v = judge("mirror-only", {"gpu01": apt.replace("# deb http", "deb http")})["gpu01"]
    assert v.status == Status.FAIL and "archive.ubuntu.com" in v.reason


def test_mirror_only_takes_the_inventory_value_literally():
    # a '.' in the mirror is a dot, not "any character": a look-alike host fails
    lookalike = REPOS.replace("mirror.seed-dc.internal", "mirror-seed-dc.internal", 1)
    v = judge("mirror-only", {"gpu01": lookalike})["gpu01"]
    assert MIRROR == "http://mirror.seed-dc.internal/" and v.status == Status.FAIL


OS = f'PRETTY_NAME="{V["os_release"]}"\n{V["kernel_version"]}\n'


def test_os_kernel_design_and_fleet():
    fleet = {f"gpu{i:02d}": OS for i in range(1, 5)}
    assert {v.status for v in judge("os-kernel-consistent", fleet).values()} == {Status.PASS}
    fleet["gpu03"] = OS.replace(V["kernel_version"], "5.14.0-427.13.1.el9_4.x86_64")
    out = judge("os-kernel-consistent", fleet)
    assert [h for h, v in out.items() if v.status == Status.FAIL] == ["gpu03"]
    assert "outliers gpu03" in out["gpu03"].reason


def test_hostname_is_anchored():
    assert status(judge("hostname-matches", {"gpu01": "gpu01\n"})) == Status.PASS
    assert status(judge("hostname-matches", {"gpu01": "gpu010\n"})) == Status.FAIL
    assert status(judge("hostname-matches", {"gpu01": "localhost\n"})) == Status.FAIL


def test_clock_sync_real_output_and_offset():
    tracking = (
        "Reference ID    : C0A80101 (ntp1.seed-dc.internal)\nStratum         : 3\n"
        "Ref time (UTC)  : Thu Nov 28 10:00:00 2024\nSystem time     : 0.000012000 seconds fast of NTP time\n"
        "Last offset     : +0.000001000 seconds\nRMS offset      : 0.000010000 seconds\n"
        "Frequency       : 1.234 ppm slow\nResidual freq   : +0.001 ppm\nSkew            : 0.010 ppm\n"
        "Root delay      : 0.000400000 seconds\nRoot dispersion : 0.000100000 seconds\n"
        "Update interval : 64.0 seconds\nLeap status     : Normal\n"
    )
    assert status(judge("clock-sync", {"gpu01": tracking})) == Status.PASS
    skewed = tracking.replace("0.000012000 seconds fast", "2.500000000 seconds slow")
    v = judge("clock-sync", {"gpu01": skewed})["gpu01"]
    assert v.status == Status.FAIL and "system_time_abs_ms" in v.reason
    unsynced = tracking.replace("Leap status     : Normal", "Leap status     : Not synchronised")
    assert status(judge("clock-sync", {"gpu01": unsynced})) == Status.FAIL


def test_peermem_loaded_and_persisted():
    lsmod = "Module                  Size  Used by\nnvidia_peermem         16384  0\nnvidia              9633792  3 nvidia_peermem\n"
    conf = "/etc/modules-load.d/nvidia-peermem.conf:nvidia-peermem\n"
    assert status(judge("nvidia-peermem", {"gpu01": lsmod + conf})) == Status.PASS
    assert (
        status(
            judge("nvidia-peermem", {"gpu01": lsmod.replace("nvidia_peermem         16384  0\n", "") + conf})
        )
        == Status.FAIL
    )
    # loaded by hand, lost at the next boot (link-type-ib owes one)
    v = judge("nvidia-peermem", {"gpu01": lsmod}, exit_status=2)["gpu01"]
    assert v.status == Status.FAIL and "modules-load" in v.reason


def test_cuda_release():
    nvcc = (
        "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2024 NVIDIA Corporation\n"
        "Built on Thu_Mar_28_02:18:24_PDT_2024\nCuda compilation tools, release 12.4, V12.4.131\n"
        "Build cuda_12.4.r12.4/compiler.34097967_0\n"
    )
    assert status(judge("cuda-version", {"gpu01": nvcc})) == Status.PASS
    assert (
        status(judge("cuda-version", {"gpu01": nvcc.replace("release 12.4, V12.4", "release 12.2, V12.2")}))
        == Status.FAIL
    )


def test_ofed_version_design_and_fleet_outlier():
    fleet = {f"gpu{i:02d}": "MLNX_OFED_LINUX-23.10-1.1.9.0:\n" for i in range(1, 4)}
    fleet["gpu02"] = "MLNX_OFED_LINUX-24.01-0.3.3.1:\n"
    out = judge("ofed-version", fleet)
    assert out["gpu01"].status == out["gpu03"].status == Status.PASS
    assert out["gpu02"].status == Status.FAIL
    assert "MLNX_OFED_LINUX-23.10-1.1.9.0" in out["gpu02"].reason and "outliers gpu02" in out["gpu02"].reason


def test_unreadable_output_is_unknown_not_pass():
    assert status(judge("ofed-version", {"gpu01": "bash: ofed_info: command not found\n"})) == Status.UNKNOWN
    assert (
        status(
            judge("gpu-nic-topology", {"gpu01": "NVIDIA-SMI has failed because it couldn't communicate\n"})
        )
        == Status.UNKNOWN
    )


def test_opensm_active_reads_enabled_and_active_separately():
    ok = "LoadState=loaded\nActiveState=active\nUnitFileState=enabled\n"
    assert status(judge("opensm-active", {"sm01": ok}), "sm01") == Status.PASS
    v = judge("opensm-active", {"sm01": ok.replace("=active", "=inactive")})["sm01"]
    assert v.status == Status.FAIL and "active_state: expected 'active', found 'inactive'" in v.reason
    v = judge("opensm-active", {"sm01": ok.replace("=enabled", "=disabled")})["sm01"]
    assert v.status == Status.FAIL and "unit_file_state: expected 'enabled', found 'disabled'" in v.reason
    # the unit of another OpenSM package: not found, said so
    missing = "LoadState=not-found\nActiveState=inactive\nUnitFileState=\n"
    v = judge("opensm-active", {"sm01": missing})["sm01"]
    assert v.status == Status.FAIL and "load_state: expected 'loaded', found 'not-found'" in v.reason


def test_mellanox_function_count():
    name = {
        "ConnectX-7": "MT2910 Family [ConnectX-7] [15b3:1021]",
        "ConnectX-6": "MT28908 Family [ConnectX-6] [15b3:101b]",
    }
    nics = V["compute_nics"] + V["storage_nics"]
    seven = "".join(
        f"{n['pci'][5:]} Infiniband controller [0207]: Mellanox Technologies {name[n['hca']]}\n" for n in nics
    )
    assert status(judge("mellanox-functions", {"gpu01": seven})) == Status.PASS
    v = judge("mellanox-functions", {"gpu01": seven.split("\n", 1)[1]})["gpu01"]
    assert v.status == Status.FAIL and "expected count 7, found 6" in v.reason
    # the missing card is named by its slot (the first line was the rail-1 card)
    assert "rail 1 NIC 0000:18:00.0 (mlx5_0): not on the PCI bus" in v.reason
    swapped = seven.replace(
        "MT2910 Family [ConnectX-7] [15b3:1021]", "MT28908 Family [ConnectX-6] [15b3:101b]", 1
    )
    v = judge("mellanox-functions", {"gpu01": swapped})["gpu01"]
    assert v.status == Status.FAIL and "a ConnectX-6 in this slot, the design has a ConnectX-7" in v.reason


def test_ib_ports_sm_lid_consistent_across_the_fleet():
    nics = V["compute_nics"] + V["storage_nics"]
    chip = {"ConnectX-7": "MT4129", "ConnectX-6": "MT4123"}

    def ibstat(sm_lid: int, cx6_fw: str | None = None) -> str:
        # `ibdev2netdev -v; ibstat` as the verify runs it: every designed NIC at its PCI address
        head = "".join(
            f"{n['pci']} {n['dev']} ({chip[n['hca']]} - X) card fw 1 port 1 (ACTIVE) ==> {n['netdev']} (Up)\n"
            for n in nics
        )
        return head + "".join(
            f"CA '{n['dev']}'\n\tCA type: {chip[n['hca']]}\n\tNumber of ports: 1\n"
            f"\tFirmware version: {(cx6_fw or V['hca_firmware'][n['hca']]) if n['hca'] == 'ConnectX-6' else V['hca_firmware'][n['hca']]}\n"
            f"\tPort 1:\n\t\tState: Active\n"
            f"\t\tPhysical state: LinkUp\n\t\tRate: 200\n\t\tBase lid: {10 + i}\n\t\tLMC: 0\n"
            f"\t\tSM lid: {sm_lid}\n\t\tLink layer: InfiniBand\n"
            for i, n in enumerate(nics)
        )

    out = judge("ib-ports-active", {"gpu01": ibstat(1), "gpu02": ibstat(1), "gpu03": ibstat(9)})
    assert [h for h, v in out.items() if v.status == Status.FAIL] == ["gpu03"]
    assert "ports.0.sm_lid: found 9, fleet majority 1" in out["gpu03"].reason
    # one node's storage cards on another firmware: against the design and against the fleet
    out = judge("ib-ports-active", {"gpu01": ibstat(1), "gpu02": ibstat(1), "gpu03": ibstat(1, "20.38.1002")})
    assert [h for h, v in out.items() if v.status == Status.FAIL] == ["gpu03"]
    assert "firmware 20.38.1002, expected 20.39.1002" in out["gpu03"].reason
    assert "firmware: found 'MT4123 20.38.1002, MT4129 28.39.1002', fleet majority" in out["gpu03"].reason
