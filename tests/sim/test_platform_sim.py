"""The simulator's GPU-health, platform, firmware, OS and storage side
(runbook/sim/platform.py, faults_platform.py, commands/gpu_health.py,
nvsmi_q.py, firmware.py, platform_os.py): each fault changes what the tools
show, and what the tools print is read by the real-output parsers (the
simulator must print what real hardware prints)."""

from __future__ import annotations

import pytest

from runbook import parsers

# fault -> (node, command, text on the faulty node, text on a healthy node)
PLATFORM = {
    "gpu_persistence_off": (
        "gpu01",
        "nvidia-smi --query-gpu=persistence_mode --format=csv,noheader | sort -u",
        "Disabled",
        "Enabled",
    ),
    "gpu_power_capped": (
        "gpu01",
        "nvidia-smi -q -d POWER | grep 'Current Power Limit' | sort -u",
        "250.00 W",
        "350.00 W",
    ),
    "gpu_throttled_power": (
        "gpu01",
        "nvidia-smi -q -d PERFORMANCE -i 6 | grep 'HW Power Brake'",
        ": Active",
        ": Not Active",
    ),
    "gpu_ecc_uncorrectable": ("gpu01", "nvidia-smi -q -d ROW_REMAPPER -i 3 | grep Pending", "Yes", "No"),
    "gpu_xid_79": ("gpu01", "dmesg | grep -c 'NVRM: Xid'", "1", "0"),
    "dcgm_fail_pcie": ("gpu01", "dcgmi diag -r 2 | grep 'GPU2:'", "GPU2: Fail", "GPU2: Pass"),
    "gpu_bar1_small": ("gpu01", "nvidia-smi -q -d MEMORY -i 0 | grep -A1 BAR1", ": 256 MiB", ": 65536 MiB"),
    "gpu_vbios_drift": (
        "gpu01",
        "nvidia-smi --query-gpu=vbios_version --format=csv,noheader | sort -u",
        "95.02.3C.00.01",
        "95.02.66.00.02\n",
    ),
    "gpu_burn_faulty": ("gpu01", "cd /opt/gpu-burn && ./gpu_burn 4 | grep 'GPU 4:'", "FAULTY", "OK"),
    "acs_enabled": ("gpu01", "lspci -vvv -d 1000:c030 | grep ACSCtl | sort -u", "ReqRedir+", "ReqRedir-"),
    "iommu_on": ("gpu01", "cat /proc/cmdline", "intel_iommu=on", "iommu=pt"),
    "hca_fw_drift": ("gpu01", "mlxfwmanager --query | grep -c '20.38.1002'", "1", "0"),
    "bios_drift": ("sm01", "dmidecode -s bios-version", "1.8", "1.4"),
    "memlock_limited": ("gpu01", "ulimit -l", "65536", "unlimited"),
    "tuned_wrong_profile": (
        "gpu01",
        "tuned-adm active; cat /sys/devices/system/cpu/cpu7/cpufreq/scaling_governor",
        "balanced\npowersave",
        "throughput-performance\nperformance",
    ),
    "no_systemd": (
        "gpu01",
        "command -v systemd-run; [ -d /run/systemd/system ] && echo running || echo absent",
        "absent",
        "/usr/bin/systemd-run\nrunning",
    ),
    "storage_target_down": (
        "gpu01",
        "ping -c 1 -I ib4 10.20.255.1 | tail -1",
        "100% packet loss",
        "rtt min/avg/max",
    ),
    "storage_mount_missing": ("gpu01", "grep -c ' /checkpoints nfs4 ' /proc/mounts", "0", "1"),
}


@pytest.mark.parametrize("fault", sorted(PLATFORM))
async def test_platform_fault_changes_what_tools_show(machine_of, sh, fault):
    node, command, faulty_text, healthy_text = PLATFORM[fault]
    faulty = machine_of(2, {node: [fault]})(node)
    healthy = machine_of(2)(node)
    bad, _, _ = await sh(faulty, command)
    good, _, _ = await sh(healthy, command)
    assert faulty_text in bad and healthy_text in good, (bad, good)
    assert faulty.state.faults == [fault]


# command -> the parser of its real outputs
PARSED = {
    "nvidia-smi -q": "nvidia-smi-q",
    "nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER": "nvidia-smi-q",
    "nvidia-smi -q -d MEMORY": "nvidia-smi-q",
    "dcgmi diag -r 3": "dcgmi-diag",
    "dmesg --ctime": "dmesg-xid",
    "dmesg --time-format iso": "dmesg-xid",
    "nvbandwidth -t host_to_device_memcpy_ce -t device_to_device_memcpy_read_ce": "nvbandwidth",
    "lspci -vvv -d 1000:c030": "lspci-vv",
    "tuned-adm active": "tuned",
    "cat /proc/cmdline": "proc-cmdline",
    "dmidecode -t bios": "dmidecode-bios",
}


@pytest.mark.parametrize("command", sorted(PARSED))
async def test_simulated_output_reads_like_the_real_tool(machine_of, sh, command):
    faults = ["gpu_ecc_uncorrectable", "gpu_throttled_power", "acs_enabled", "dcgm_fail_pcie", "gpu_xid_79"]
    for machine in (machine_of(2)("gpu01"), machine_of(2, {"gpu01": faults})("gpu01")):
        out, err, status = await sh(machine, command)
        assert err == "" and out
        assert parsers.parse(PARSED[command], out) is not None


async def test_parsed_readings_follow_the_faults(machine_of, sh):
    m = machine_of(
        2, {"gpu01": ["gpu_ecc_uncorrectable", "gpu_throttled_power", "acs_enabled", "gpu_xid_79"]}
    )("gpu01")
    q = parsers.parse("nvidia-smi-q", (await sh(m, "nvidia-smi -q"))[0])
    by_bus = {g["bus_id"]: g for g in q["gpus"]}
    assert by_bus["00000000:22:00.0"]["remapped_rows"]["pending"] is True
    assert by_bus["00000000:22:00.0"]["ecc"]["volatile"]["dram_uncorrectable"] == 2
    assert "hw_power_brake_slowdown" in by_bus["00000000:A1:00.0"]["clocks_reasons_active"]
    assert q["gpus"][0]["bar1_total_mib"] == 65536 and q["gpus"][0]["power"]["limit_w"] == 350.0
    xids = parsers.parse("dmesg-xid", (await sh(m, "dmesg --ctime"))[0])
    assert xids["by_pci"] == {"0000:22:00": [48], "0000:9a:00": [79]}
    acs = parsers.parse("lspci-vv", (await sh(m, "lspci -vvv -d 1000:c030"))[0])
    assert all(d["acs_redirect"] for d in acs["devices"]) and len(acs["devices"]) == 12


async def test_settings_change_state_and_survive_or_not_a_reboot(machine_of, sh):
    machine_for = machine_of(2, {"gpu01": ["gpu_power_capped", "iommu_on", "acs_enabled"]})
    m = machine_for("gpu01")
    await sh(
        m,
        "nvidia-smi -pl 350; grubby --update-kernel=ALL --args=iommu=pt; setpci -s 16:00.0 ECAP_ACS+0x6.w=0000",
    )
    assert (await sh(m, "setpci -s 16:00.0 ECAP_ACS+0x6.w"))[0] == "0000\n"
    assert "iommu=pt" not in (await sh(m, "cat /proc/cmdline"))[0]  # only after the reboot
    m.cluster.boot(m.state)
    assert "iommu=pt" in (await sh(m, "cat /proc/cmdline"))[0].split()
    assert (await sh(m, "setpci -s 16:00.0 ECAP_ACS+0x6.w"))[0] == "001d\n"  # back to the BIOS setting
    assert "350.00 W" in (await sh(m, "nvidia-smi -q -d POWER -i 0 | grep 'Current Power Limit'"))[0]


async def test_storage_probe_on_a_mount(machine_of, sh):
    m = machine_of(2)("gpu01")
    out, _, status = await sh(m, "echo probe > /data/.p && cat /data/.p && rm -f /data/.p && ls -a /data")
    assert status == 0 and out.startswith("probe\n") and ".p" not in out


async def test_detached_job_outlives_its_session_and_is_reattached(machine_of, sh):
    import asyncio

    from runbook.engine.detached import wrap

    m = machine_of(1)("gpu01")
    command = "cd /opt/gpu-burn && ./gpu_burn 8 | tail -1"
    session = asyncio.ensure_future(sh(m, wrap(command, "r1", "gpu-burn-in", "verify")))
    await asyncio.sleep(1.5)
    session.cancel()  # the engineer's connection drops
    assert len(m.detached) == 1 and m.state.platform.burn_runs == 1
    resumed = wrap(command, "r1", "gpu-burn-in", "verify", resume=True)
    out, err, status = await sh(m, resumed)
    assert status == 0 and out == "\tGPU 7: OK\n" and "re-attached" in err
    assert m.state.platform.burn_runs == 1 and not m.detached
    # read again on a second resume (a client killed after the job ended): the same result, no new burn
    out, err, status = await sh(m, resumed)
    assert (out, status) == ("\tGPU 7: OK\n", 0) and "finished while nobody was attached" in err
    assert m.state.platform.burn_runs == 1
    # a deliberate new verify sets the old result aside and burns again
    out, err, status = await sh(m, wrap(command, "r1", "gpu-burn-in", "verify"))
    assert status == 0 and m.state.platform.burn_runs == 2 and "set aside" in err
    assert (await sh(m, "ls /var/tmp/runbook-jobs"))[0].startswith(
        "r1.gpu-burn-in.verify\nr1.gpu-burn-in.verify.done."
    )


async def test_one_firmware_truth_every_tool_shows_the_drifted_card(machine_of, sh):
    """hca_fw_drift changes the one running firmware of a card (node.firmware):
    ibstat, sysfs, ibv_devinfo, mlxfwmanager and flint all show it, per family."""
    node = machine_of(2, {"gpu01": ["hca_fw_drift"]})("gpu01")
    reads = {
        "ibstat mlx5_4 | grep Firmware": "Firmware version: 20.38.1002",
        "cat /sys/class/infiniband/mlx5_4/fw_ver": "20.38.1002",
        "ibv_devinfo -d mlx5_4 | grep fw_ver": "20.38.1002",
        "flint -d mlx5_4 q | grep 'FW Version'": "20.38.1002",
        "mlxfwmanager --query | grep -c 'FW             20.38.1002'": "1",
        # the other cards keep their family's design firmware
        "mlxfwmanager --query | grep -c 'FW             28.39.1002'": "4",
        "mlxfwmanager --query | grep -c 'FW             20.39.1002'": "1",
    }
    for command, expected in reads.items():
        out, _, status = await sh(node, command)
        assert status == 0 and expected in out, (command, out)
    sm = machine_of(2)("sm01")
    out, _, _ = await sh(sm, "mlxfwmanager --query")
    record = parsers.parse("mlxfwmanager", out)
    assert [(d["device_type"], d["psid"], d["fw_current"]) for d in record["devices"]] == [
        ("ConnectX6", "MT_0000000223", "20.39.1002")
    ]


async def test_nvidia_smi_q_shows_the_health_state_in_the_pci_layout(machine_of, sh):
    """One nvidia-smi -q: the GPU-health faults (power cap) show in the same log
    whose PCI section reads the link's idle downtraining."""
    node = machine_of(2, {"gpu01": ["gpu_power_capped"]})("gpu01")
    out, _, _ = await sh(node, "nvidia-smi -q -i 0")
    gpu = parsers.parse("nvidia-smi-q", out)["gpus"][0]
    assert gpu["power"]["limit_w"] == 250.0 and gpu["power"]["default_limit_w"] == 350.0
    assert gpu["pcie"]["gen_current"] == 1 and gpu["pcie"]["gen_max"] == 4  # idle downtraining
    out, _, _ = await sh(node, "nvidia-smi -q -i 0 -d POWER")
    assert "Power Readings" in out or "GPU Power Readings" in out
    assert (
        "Performance State" not in out and "PCI" not in out.split("Attached GPUs")[-1]
    )  # only what was asked
    _, err, status = await sh(node, "nvidia-smi -q -d PCI")  # no such display type in the real tool
    assert status == 2 and "is not a valid display type" in err
    _, err, status = await sh(node, "nvidia-smi -q -d NOPE")
    assert status == 2 and "is not a valid display type" in err
