"""Every fault of the menu, shown by what a runbook would run: the faulty node
answers differently from a healthy one."""

import asyncio
import time

import asyncssh
import pytest

from runbook.sim.faults import BEHAVIOURS, MENU
from tests.sim.conftest import connect_node

# fault -> (node, command, text expected on the faulty node, text on a healthy node)
HARDWARE = {
    "link_type_eth": (
        "gpu01",
        "cat /sys/class/infiniband/mlx5_0/ports/1/link_layer",
        "Ethernet",
        "InfiniBand",
    ),
    "wrong_rail": (
        "gpu01",
        "ibnetdiscover -p | grep \"^CA.*'gpu01.seed-dc.internal mlx5_0'\"",
        "leaf02",
        "leaf01",
    ),
    "nic_numa_mismatch": ("gpu01", "cat /sys/class/infiniband/mlx5_2/device/numa_node", "0", "1"),
    # idle GPUs sit at 2.5GT/s (power saving): the width shows at idle, the speed under load
    "pcie_x8": (
        "gpu01",
        "lspci -vv -d 10de: | grep LnkSta: | sort | uniq -c",
        "Width x8 (downgraded)",
        "8 \t\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x16",
    ),
    "pcie_gen3": (
        "gpu01",
        "nvbandwidth -t host_to_device_memcpy_ce | grep -A2 '^memcpy CE' | tail -1",
        "12.",
        "26.",
    ),
    "missing_dimm": ("gpu01", "dmidecode -t memory | grep -cE '^\\s+Size: 64 GB'", "15", "16"),
    "ofed_version_drift": (
        "gpu01",
        "ofed_info -s; modinfo -F version mlx5_core",
        "MLNX_OFED_LINUX-23.07-0.5.1.2:\n23.07-0.5.1",
        "MLNX_OFED_LINUX-23.10-1.1.9.0:\n23.10-1.1.9",
    ),
    "driver_version_drift": (
        "gpu01",
        "nvidia-smi --query-gpu=driver_version --format=csv,noheader | sort -u",
        "550.54.15",
        "550.90.07",
    ),
    "ofed_kmod_stale": (
        "gpu01",
        "modinfo -F version mlx5_core; cat /sys/module/mlx5_core/version",
        "23.10-1.1.9\n23.07-0.5.1",
        "23.10-1.1.9\n23.10-1.1.9",
    ),
    "ofed_kernel_mismatch": (
        "gpu01",
        "ofed_info -s; modinfo -F version mlx5_core",
        "MLNX_OFED_LINUX-23.10-1.1.9.0:\n23.07-0.5.1",
        "MLNX_OFED_LINUX-23.10-1.1.9.0:\n23.10-1.1.9",
    ),
    "etc_drift": ("gpu01", "sha256sum /etc/modprobe.d/mlx5.conf | cut -c1-12", None, None),
    "external_repo": ("gpu01", "cat /etc/yum.repos.d/*.repo | grep -c '^baseurl=https://'", "1", "0"),
    "clock_skew": ("gpu01", "chronyc tracking | grep 'System time'", "2.350000000 seconds fast", "0.0000"),
    "ib_port_down": ("gpu01", "cat /sys/class/infiniband/mlx5_1/ports/1/state", "1: DOWN", "4: ACTIVE"),
    "ib_rate_100": ("gpu01", "ibstat mlx5_3 | grep Rate", "Rate: 100", "Rate: 200"),
    "pkey_missing": ("sm02", "grep -c '^storage=' /etc/opensm/partitions.conf", "0", "1"),
    "opensm_down": (
        "sm02",
        "systemctl is-active opensmd; systemctl is-enabled opensmd",
        "inactive\ndisabled",
        "active\nenabled",
    ),
    "irq_affinity_wrong": ("gpu01", "cat /proc/irq/121/smp_affinity_list", "32", "0"),
    "irqbalance_unbanned": ("gpu01", "cat /proc/irq/121/smp_affinity_list", "125", "0"),
    "irq_pinning_not_persisted": ("gpu01", "systemctl is-enabled nic-irq-affinity", "disabled", "enabled"),
    "fw_reset_needed": (
        "gpu01",
        "mst start >/dev/null; mlxconfig -d mlx5_1 -e q LINK_TYPE_P1 | tail -1",
        "ETH(2)",
        "IB(1)",
    ),
    "peermem_missing": ("gpu01", "lsmod | grep -c '^nvidia_peermem '", "0", "1"),
    # the rail-2 card is gone: the rail-3 card (98:00.0) now answers to mlx5_1
    "nic_dead": ("gpu01", "ls /sys/bus/pci/devices/0000:98:00.0/infiniband", "mlx5_1", "mlx5_2"),
    "hca_fw_drift": ("gpu01", "ibstat mlx5_4 | grep Firmware", "20.38.1002", "20.39.1002"),
    # both ends of the marginal link: the HCA's port line, the leaf's ALL and port lines
    # (only switches answer AllPortSelect: rdma-core ibqueryerrors.c)
    "cable_ber": ("gpu01", "ibqueryerrors | grep -c 'SymbolErrorCounter == 4873'", "3", "0"),
    "no_ibdiagnet": ("sm01", "command -v ibdiagnet || echo none", "none", "/usr/bin/ibdiagnet"),
    "sm_standby_missing": (
        "sm02",
        "systemctl is-active opensmd; systemctl is-enabled opensmd",
        "inactive\nenabled",
        "active\nenabled",
    ),
    "spine_link_down": ("sm01", "iblinkinfo | grep -c 'MF0;spine04:'", "20", "21"),
    "slow_node": (
        "gpu01",
        "mpirun -H gpu01:8,gpu02:8 all_reduce_perf -b 1G -e 1G -g 1 | grep -c 'Avg bus bandwidth    : 2'",
        "1",
        "0",
    ),
}


# faults tested where they matter, not by one command (tests/sim/test_launch_jobs.py)
TIMED = {"long_job"}


def test_every_fault_of_the_menu_is_covered():
    from .test_platform_sim import PLATFORM  # the GPU-health / platform / storage faults

    assert set(HARDWARE) | set(PLATFORM) | BEHAVIOURS | TIMED == set(MENU)


@pytest.mark.parametrize("fault", sorted(HARDWARE))
async def test_hardware_fault_changes_what_tools_show(machine_of, sh, fault):
    node, command, faulty_text, healthy_text = HARDWARE[fault]
    faulty = machine_of(2, {node: [fault]})(node)
    healthy = machine_of(2)(node)
    bad, _, _ = await sh(faulty, command)
    good, _, _ = await sh(healthy, command)
    assert bad != good
    if faulty_text is not None:
        assert faulty_text in bad and healthy_text in good, (bad, good)
    assert faulty.state.faults == [fault]


async def test_fault_with_an_explicit_target(machine_of, sh):
    get = machine_of(2, {"gpu01": [{"link_type_eth": "mlx5_3"}, {"pcie_x8": "mlx5_1"}]})
    out, _, _ = await sh(get("gpu01"), "cat /sys/class/infiniband/mlx5_*/ports/1/link_layer | uniq -c")
    assert out == "      3 InfiniBand\n      1 Ethernet\n      3 InfiniBand\n"
    out, _, _ = await sh(get("gpu01"), f"lspci -vv -s {get('gpu01').state.nics[1].bus} | grep LnkSta:")
    assert "Width x8 (downgraded)" in out


async def test_nic_on_wrong_numa_leaves_single_node_nccl_alone_and_x8_halves(machine_of, sh):
    # Inside one node NCCL goes GPU to GPU over PCIe and uses no NIC: a NIC in the
    # other socket's slot costs nothing there (it costs 20-30 % across nodes).
    get = machine_of(3, {"gpu02": ["nic_numa_mismatch"], "gpu03": ["pcie_x8"]})

    async def busbw(name):
        out, _, code = await sh(
            get(name), "all_reduce_perf -b 8G -e 8G -g 8 | grep -v '^#' | awk '{print $8}'"
        )
        assert code == 0
        return float(out)

    healthy, numa, x8 = await busbw("gpu01"), await busbw("gpu02"), await busbw("gpu03")
    assert healthy >= 18.5
    assert 0.97 <= numa / healthy <= 1.03
    assert 0.45 <= x8 / healthy <= 0.55
    out, _, _ = await sh(get("gpu02"), "nvidia-smi topo -m | grep ^GPU4")
    assert out.split()[11] == "SYS"  # GPU4 -> NIC2 crosses the sockets now


async def test_wrong_rail_and_100g_slow_down_inter_node_nccl(machine_of, sh):
    get = machine_of(4, {"gpu03": ["wrong_rail"], "gpu04": ["ib_rate_100"]})

    async def busbw(hosts):
        out, err, code = await sh(
            get("gpu01"),
            f"mpirun --allow-run-as-root -H {hosts} --map-by ppr:8:node "
            f"/opt/nccl-tests/build/all_reduce_perf -b 8G -e 8G -g 1"
            " | grep -v '^#' | awk '{print $8}'",
        )
        assert code == 0, err
        return float(out)

    healthy = await busbw("gpu01:8,gpu02:8")
    assert healthy >= 38.0
    assert await busbw("gpu01:8,gpu03:8") < healthy * 0.9
    assert await busbw("gpu01:8,gpu04:8") < healthy * 0.9


async def _connect(lab, name, **kw):
    return await connect_node(lab, name, **kw)


async def test_behaviour_faults_over_ssh(make_lab):
    lab = await make_lab(
        3,
        {"gpu01": ["unreachable"], "gpu02": ["hang"], "gpu03": ["slow"], "sm01": ["host_key_changed"]},
        slow_seconds=0.4,
    )
    with pytest.raises(OSError):  # connection refused
        await _connect(lab, "gpu01")
    async with await _connect(lab, "gpu02") as conn:  # accepts, then never answers
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(conn.run("hostname"), 0.5)
    async with await _connect(lab, "gpu03") as conn:
        start = time.monotonic()
        result = await conn.run("hostname")
        assert result.stdout == "gpu03\n" and time.monotonic() - start >= 0.4
    with pytest.raises(asyncssh.HostKeyNotVerifiable):
        await _connect(lab, "sm01")
    async with await _connect(lab, "sm02") as conn:  # the healthy neighbour verifies fine
        assert (await conn.run("hostname")).stdout == "sm02\n"
