"""Applying the documented fixes makes a faulty node compliant; rolling back
restores what was there before."""

import pytest
import yaml


async def run(lab, name, command):
    out, err, code = await lab.node(name).run(command)
    assert code == 0, f"{name}: {command!r} -> {code}: {err}"
    return out


async def reboot(lab, name):
    node = lab.node(name)
    await node.run("reboot")
    await node.rebooting  # down for reboot_seconds, then booted and listening again
    assert node.up


async def test_link_type_fix_needs_mst_then_reboot_and_rolls_back(make_lab):
    lab = await make_lab(2, {"gpu01": ["link_type_eth"]})
    ll = "cat /sys/class/infiniband/mlx5_0/ports/1/link_layer"
    assert await run(lab, "gpu01", ll) == "Ethernet\n"
    assert "Base lid: 0\n" in await run(lab, "gpu01", "ibstat mlx5_0")
    # mlxconfig needs the MST driver, like the real tool
    _, err, code = await lab.node("gpu01").run("mlxconfig -d mlx5_0 q LINK_TYPE_P1")
    assert code == 1 and "Failed to open the device" in err
    assert "ETH(2)" in await run(lab, "gpu01", "mst start && mlxconfig -d mlx5_0 q LINK_TYPE_P1")
    await run(lab, "gpu01", "mlxconfig -y -d mlx5_0 set LINK_TYPE_P1=1")
    # stored for the next boot: the query shows IB, the port is still Ethernet
    assert "IB(1)" in await run(lab, "gpu01", "mlxconfig -d mlx5_0 q LINK_TYPE_P1")
    assert await run(lab, "gpu01", ll) == "Ethernet\n"
    node = lab.node("gpu01")
    await node.run("reboot")
    await asyncio_sleep(0.1)
    assert not node.up  # unreachable while rebooting
    with pytest.raises(ConnectionRefusedError):
        await node.run("hostname")
    await node.rebooting
    assert await run(lab, "gpu01", ll) == "InfiniBand\n"
    ibstat = await run(lab, "gpu01", "ibstat mlx5_0")
    lid = lab.cluster.fabric.lid_of[("gpu01", "mlx5_0")]
    assert "State: Active" in ibstat and f"Base lid: {lid}\n" in ibstat and "SM lid: 1\n" in ibstat
    assert "not loaded" in await run(lab, "gpu01", "mst status")  # MST is gone after a reboot
    # rollback: the value verify found before, then the owed reboot
    await run(lab, "gpu01", "mst start && mlxconfig -y -d mlx5_0 set LINK_TYPE_P1=2")
    await reboot(lab, "gpu01")
    assert await run(lab, "gpu01", ll) == "Ethernet\n"


async def asyncio_sleep(seconds):
    import asyncio

    await asyncio.sleep(seconds)


async def test_starting_opensm_gives_lids_and_master_failover(make_lab):
    lab = await make_lab(2, {"sm01": ["opensm_down"], "sm02": ["opensm_down"]})
    assert "State: Initializing" in await run(lab, "gpu01", "ibstat mlx5_0")
    out, err, code = await lab.node("gpu01").run("sminfo")
    assert code == 255 and err == "sminfo: iberror: query failed\n"
    await run(lab, "sm02", "systemctl enable --now opensmd")
    assert "priority 14 state 3 SMINFO_MASTER" in await run(lab, "gpu01", "sminfo")
    await run(lab, "sm01", "systemctl start opensmd")  # higher priority: takes over
    assert "sm lid 1 " in await run(lab, "gpu01", "sminfo")
    assert "state 2 SMINFO_STANDBY" in await run(lab, "gpu01", "sminfo 2")
    assert "SM lid: 1\n" in await run(lab, "gpu02", "ibstat mlx5_3")
    await run(lab, "sm01", "systemctl stop opensmd")  # master gone: the standby takes over
    assert "sm lid 2 " in await run(lab, "gpu01", "sminfo")
    assert "SM lid: 2\n" in await run(lab, "gpu02", "ibstat mlx5_3")
    # rollback of the start on sm02: stop and disable again -> no SM, no LIDs
    await run(lab, "sm02", "systemctl disable --now opensmd")
    assert "Base lid: 0\n" in await run(lab, "gpu02", "ibstat mlx5_3")


async def test_partitions_conf_rewrite_restores_pkeys_and_rollback(make_lab):
    lab = await make_lab(2, {"sm01": ["pkey_missing"]})
    storage_pkey = "cat /sys/class/infiniband/mlx5_4/ports/1/pkeys/1"
    compute_pkey = "cat /sys/class/infiniband/mlx5_0/ports/1/pkeys/1"
    assert await run(lab, "gpu01", storage_pkey) == "0x0000\n"  # sm01 is master: its file rules
    assert await run(lab, "gpu01", compute_pkey) == "0x8100\n"
    before = await run(lab, "sm01", "cat /etc/opensm/partitions.conf")
    design = yaml.safe_load(lab.inventory.read_text())["all"]["children"]["sm"]["vars"]["partitions_conf"]
    await run(lab, "sm01", f"cat > /etc/opensm/partitions.conf <<'EOF'\n{design}EOF\n")
    assert await run(lab, "gpu01", storage_pkey) == "0x8200\n"
    assert await run(lab, "gpu01", compute_pkey) == "0x8100\n"  # compute stays out of storage
    assert await run(lab, "gpu01", "cat /sys/class/infiniband/mlx5_0/ports/1/pkeys/2") == "0x0000\n"
    await run(lab, "sm01", f"printf '%s' '{before}' > /etc/opensm/partitions.conf")
    assert await run(lab, "gpu01", storage_pkey) == "0x0000\n"


async def test_modprobe_peermem_and_rollback(make_lab):
    lab = await make_lab(1, {"gpu01": ["peermem_missing"]})
    check = "lsmod | grep -c '^nvidia_peermem '"
    out, _, code = await lab.node("gpu01").run(check)
    assert (out, code) == ("0\n", 1)
    await run(lab, "gpu01", "modprobe nvidia-peermem")
    assert await run(lab, "gpu01", check) == "1\n"
    await run(lab, "gpu01", "modprobe -r nvidia-peermem")
    assert (await lab.node("gpu01").run(check))[0] == "0\n"


async def test_irq_affinity_from_measured_numa_and_rollback(make_lab):
    lab = await make_lab(1, {"gpu01": ["irq_affinity_wrong"]})
    irqs = "ls /sys/class/infiniband/mlx5_0/device/msi_irqs"
    show = f"for i in $({irqs}); do cat /proc/irq/$i/smp_affinity_list; done"
    before = (await run(lab, "gpu01", show)).split()
    local = await run(lab, "gpu01", "cat /sys/class/infiniband/mlx5_0/device/local_cpulist")
    assert local == "0-31,64-95\n" and all(int(c.split("-")[0]) >= 32 for c in before)
    await run(
        lab, "gpu01", f"for i in $({irqs}); do echo {local.strip()} > /proc/irq/$i/smp_affinity_list; done"
    )
    assert set((await run(lab, "gpu01", show)).split()) == {"0-31,64-95"}
    restore = "; ".join(
        f"echo {c} > /proc/irq/{i}/smp_affinity_list"
        for i, c in zip((await run(lab, "gpu01", irqs)).split(), before)
    )
    await run(lab, "gpu01", restore)
    assert (await run(lab, "gpu01", show)).split() == before
    _, err, code = await lab.node("gpu01").run("echo 999 > /proc/irq/121/smp_affinity_list")
    assert code == 1 and "write error: Invalid argument" in err


async def test_empty_scenario_is_compliant_with_the_written_inventory(make_lab):
    lab = await make_lab(4)
    inv = yaml.safe_load(lab.inventory.read_text())["all"]
    allv, comp = inv["vars"], inv["children"]["compute"]["vars"]
    for name in ("gpu01", "gpu04"):
        assert await run(lab, name, "ofed_info -s") == allv["ofed_version"] + ":\n"
        assert await run(lab, name, "modinfo -F version mlx5_core") == str(allv["ofed_kernel_version"]) + "\n"
        assert await run(lab, name, "uname -r") == allv["kernel_version"] + "\n"
        assert allv["os_release"] in await run(lab, name, "cat /etc/os-release")
        csv = await run(lab, name, "nvidia-smi --query-gpu=name,driver_version --format=csv,noheader")
        assert (
            csv.splitlines()
            == [f"{comp['gpu_model']}, {allv['nvidia_driver_version']}"] * comp["gpus_per_node"]
        )
        assert await run(lab, name, "lspci | grep -c Mellanox") == f"{comp['mellanox_functions']}\n"
        for nic in comp["compute_nics"]:
            dev = nic["dev"]
            assert (
                await run(lab, name, f"cat /sys/class/infiniband/{dev}/device/numa_node")
                == f"{nic['numa']}\n"
            )
            ib = await run(lab, name, f"ibstat {dev}")
            assert (
                "State: Active" in ib and f"Rate: {allv['ib_rate_gbps']}" in ib and "Base lid: 0\n" not in ib
            )
        mst = await run(
            lab,
            name,
            "mst start >/dev/null && for d in "
            + " ".join(comp["ib_mode_devices"])
            + "; do mlxconfig -d $d q LINK_TYPE_P1 | tail -1; done",
        )
        assert mst.split() == ["LINK_TYPE_P1", "IB(1)"] * len(comp["ib_mode_devices"])
        assert (
            await run(lab, name, "dmidecode -t memory | grep -cE '^\\s+Size: 64 GB'")
            == f"{comp['dimm_count']}\n"
        )
    sums = {await run(lab, n, "sha256sum " + " ".join(allv["managed_etc_files"])) for n in lab.names()}
    assert len(sums) == 1
    assert "SMINFO_MASTER" in await run(lab, "gpu02", "sminfo")
    assert "SMINFO_STANDBY" in await run(lab, "gpu02", "sminfo 2")
    assert await run(
        lab, "gpu03", "grep -c 'baseurl=http://mirror.seed-dc.internal/' /etc/yum.repos.d/*.repo"
    ) == ("/etc/yum.repos.d/rocky.repo:0\n/etc/yum.repos.d/seed-dc.repo:4\n")
    # the distribution's own repository file is there, every section disabled
    assert await run(lab, "gpu03", "grep -c '^enabled=0' /etc/yum.repos.d/rocky.repo") == "4\n"
