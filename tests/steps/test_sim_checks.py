"""The GPU-health, platform, firmware, OS-setting, storage and burn-in steps
(steps/25-platform.yaml, 45-gpu-health.yaml, 48-os-settings.yaml,
65-storage.yaml, 80-burn-in.yaml) against the simulated lab, through the real
engine and SSH: each fault of theirs is caught by its step on its host and
nowhere else; the applies fix what they can and their rollbacks restore what
verify found. (The compliant lab passing every step is test_sim_lab's.)"""

from __future__ import annotations

import pytest

from .simlab import LabRun, run_scenarios

NEW_STEPS = [
    "bios-version",
    "hca-firmware",
    "pcie-acs-disabled",
    "iommu-mode",
    "gpu-persistence-power",
    "gpu-ecc-health",
    "gpu-xid-scan",
    "gpu-bar1",
    "gpu-vbios",
    "dcgm-diag",
    "gpu-p2p-bandwidth",
    "memlock-unlimited",
    "tuned-profile",
    "storage-reachable",
    "storage-mounts",
    "gpu-burn-in",
]
# the steps they need (per host), run first
PREREQUISITES = ["mst-started", "link-type-ib", "nvidia-driver-version", "ipoib-storage"]

# fault -> (host it is injected on, the step that catches it)
FAULTS = {
    "gpu_persistence_off": ("gpu02", "gpu-persistence-power"),
    "gpu_power_capped": ("gpu03", "gpu-persistence-power"),
    "gpu_throttled_power": ("gpu04", "gpu-persistence-power"),
    "gpu_ecc_uncorrectable": ("gpu05", "gpu-ecc-health"),
    "gpu_xid_79": ("gpu06", "gpu-xid-scan"),
    "dcgm_fail_pcie": ("gpu07", "dcgm-diag"),
    "gpu_bar1_small": ("gpu08", "gpu-bar1"),
    "gpu_vbios_drift": ("gpu09", "gpu-vbios"),
    "gpu_burn_faulty": ("gpu10", "gpu-burn-in"),
    "acs_enabled": ("gpu11", "pcie-acs-disabled"),
    "iommu_on": ("gpu12", "iommu-mode"),
    "hca_fw_drift": ("gpu13", "hca-firmware"),
    "bios_drift": ("gpu14", "bios-version"),
    "memlock_limited": ("gpu15", "memlock-unlimited"),
    "tuned_wrong_profile": ("gpu16", "tuned-profile"),
    "storage_target_down": ("gpu17", "storage-reachable"),
    "storage_mount_missing": ("gpu18", "storage-mounts"),
}
SM_FAULTS = {"sm01": ["bios_drift"], "sm02": ["hca_fw_drift", "iommu_on"]}
NODES = 19  # gpu01 and gpu19 stay healthy

# Failures that follow from another step's fault, as on real hardware.
CONSEQUENCES = {
    "gpu-xid-scan": {"gpu05"},  # the double-bit error was logged as Xid 48
    "dcgm-diag": {"gpu05"},  # DCGM's deployment test fails on a pending row remap
    "gpu-p2p-bandwidth": {"gpu11"},  # ACS redirects peer copies up to the root complex
    "bios-version": {"sm01"},
    "hca-firmware": {"sm02"},
    "iommu-mode": {"sm02"},
}
# Steps that wait on a failed prerequisite instead of running (needs:).
BLOCKED = {
    ("gpu-burn-in", "gpu02"),
    ("gpu-burn-in", "gpu03"),
    ("gpu-burn-in", "gpu04"),
    ("gpu-burn-in", "gpu05"),
    ("storage-mounts", "gpu17"),
}

REASONS = {
    "gpu_persistence_off": "found '0, Disabled, 350.00 W, 0x0000000000000001'",
    "gpu_power_capped": "found '0, Enabled, 250.00 W, 0x0000000000000001'",
    "gpu_throttled_power": "found '6, Enabled, 350.00 W, 0x0000000000000089'",
    "gpu_ecc_uncorrectable": "GPU 00000000:22:00.0: uncorrectable ECC errors: 2 since boot",
    "gpu_xid_79": "Xid 79 on GPU PCI:0000:9a:00: GPU has fallen off the bus",
    "dcgm_fail_pcie": "Integration pcie: Fail on GPU2 — Bandwidth of GPU 2",
    "gpu_bar1_small": "8 of 8 GPUs: BAR1 expected 65536 MiB, found 256 MiB",
    "gpu_vbios_drift": "found '1, 95.02.3C.00.01'",
    "gpu_burn_faulty": "GPU 4: FAULTY",
    "acs_enabled": "ACS on at 12 of 12 switch ports (16:00.0,",
    "iommu_on": "/(^|\\s)iommu=pt(\\s|$)/, no match",
    # the storage card mlx5_4 (ConnectX-6) one release behind its family's design firmware
    "hca_fw_drift": "adapter #5 (0000:2c:00.0, MCX653105A-HDA_Ax): FW expected 20.39.1002 (ConnectX-6), "
    "found 20.38.1002",
    "bios_drift": "/^\\s*Version: 2\\.1\\s*$/, no match",
    "memlock_limited": "/^memlock soft: unlimited$/, no match",
    "tuned_wrong_profile": "found 'governor: powersave on 128 CPUs'",
    "storage_target_down": "found 'UNREACHABLE: 10.20.255.1'",
    "storage_mount_missing": "found 'NOT MOUNTED: /checkpoints'",
}

APPLY = {
    "pcie-acs-disabled": ["gpu11"],
    "tuned-profile": ["gpu16"],
    "gpu-persistence-power": ["gpu02", "gpu03"],
    "iommu-mode": ["gpu12"],
}


def _state(run: LabRun) -> dict:
    return {
        "acs": run.node("gpu11").platform.acs_ctl.copy(),
        "tuned": run.node("gpu16").platform.tuned_profile,
        "persistence": [g.persistence for g in run.node("gpu02").platform.gpus],
        "power": [g.power_limit_w for g in run.node("gpu03").platform.gpus],
        "cmdline": run.node("gpu12").platform.kernel_args,
        "gpu12_boots": run.node("gpu12").boot_count,
    }


async def _faults(directory):
    faults = {host: [fault] for fault, (host, _) in FAULTS.items()} | SM_FAULTS
    run = await LabRun.start(directory, nodes=NODES, faults=faults)
    try:
        await run.run(PREREQUISITES + NEW_STEPS)
        out = {"verify": run.table(), "before": _state(run)}
        for step_id, hosts in APPLY.items():
            await run.run([step_id], "apply", hosts=hosts)
        await run.run(["gpu-p2p-bandwidth"], hosts=["gpu11"], again=True)
        out["applied"] = run.table()
        out["fixed"] = _state(run)
        for step_id, hosts in APPLY.items():
            await run.run([step_id], "rollback", hosts=hosts)
            await run.run([step_id], hosts=hosts, again=True)
        out["rolled_back"] = run.table()
        out["restored"] = _state(run)
        return out
    finally:
        await run.stop()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    return run_scenarios(tmp_path_factory.mktemp("checks"), {"faults": _faults})["faults"]


def _hosts(table, step_id, status):
    return {h for h, (s, _) in table.get(step_id, {}).items() if s == status}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_fault_is_caught_by_its_step_on_its_host(lab, fault):
    host, step_id = FAULTS[fault]
    status, reason = lab["verify"][step_id][host]
    assert status == "fail", (status, reason)
    assert REASONS[fault] in reason


@pytest.mark.parametrize("step_id", NEW_STEPS)
def test_each_step_fails_exactly_its_faults_hosts(lab, step_id):
    table = lab["verify"]
    expected = {h for h, s in FAULTS.values() if s == step_id} | CONSEQUENCES.get(step_id, set())
    assert _hosts(table, step_id, "fail") == expected
    assert {(step_id, h) for h in _hosts(table, step_id, "blocked")} == {
        b for b in BLOCKED if b[0] == step_id
    }
    healthy = {h: table[step_id][h] for h in ("gpu01", "gpu19") if h in table[step_id]}
    assert healthy and all(row[0] == "pass" for row in healthy.values()), healthy


def test_sm_nodes_are_judged_against_their_own_design(lab):
    table = lab["verify"]
    assert table["bios-version"]["sm02"][0] == "pass"  # the SM model's BIOS design value, not compute's
    assert table["hca-firmware"]["sm01"][0] == "pass"
    assert "gpu-ecc-health" in table and "sm01" not in table["gpu-ecc-health"]


def test_applies_fix_what_they_can(lab):
    applied = lab["applied"]
    for step_id, hosts in APPLY.items():
        for h in hosts:
            assert applied[step_id][h][0] == "pass", (step_id, h, applied[step_id][h])
    # ACS off again at the switches: the peer copies are back at full speed
    assert applied["gpu-p2p-bandwidth"]["gpu11"][0] == "pass"
    fixed = lab["fixed"]
    assert fixed["acs"] and set(fixed["acs"].values()) == {0}
    assert fixed["tuned"] == "throughput-performance"
    assert fixed["persistence"] == [True] * 8 and fixed["power"] == [350.0] * 8
    assert "iommu=pt" in fixed["cmdline"].split()
    assert fixed["gpu12_boots"] == lab["before"]["gpu12_boots"] + 1  # the owed reboot happened


def test_rollbacks_restore_what_verify_found(lab):
    before, restored = lab["before"], lab["restored"]
    assert set(restored["acs"].values()) == {0x1D}  # the BIOS value recorded before the apply
    assert restored["tuned"] == before["tuned"] == "balanced"
    assert restored["persistence"] == before["persistence"] == [False] * 8
    assert restored["power"] == before["power"] == [250.0] * 8
    assert restored["cmdline"] == before["cmdline"] and "iommu=pt" not in restored["cmdline"].split()
    table = lab["rolled_back"]
    for step_id, hosts in APPLY.items():
        for h in hosts:
            assert table[step_id][h][0] == "fail", (step_id, h, table[step_id][h])
