"""The shipped runbook against the simulated lab, through the real engine and
SSH: a compliant lab passes every step; each fault of the simulator's menu is
caught by its step on its host and nowhere else; the applies that can fix a
fault fix it, and their rollbacks restore the recorded state.

Four labs run at once (one event loop, module-scoped): a compliant one, one
with a compute fault per node, one with the SM-node faults, one with the SSH
behaviour faults."""

from __future__ import annotations

import pytest

from runbook.sim.irqbalance import effective_cpus

from .helpers import runbook
from .simlab import LabRun, run_scenarios

# fault -> (host it is injected on, the step that catches it)
COMPUTE_FAULTS = {
    "link_type_eth": ("gpu02", "link-type-ib"),
    "wrong_rail": ("gpu03", "rail-cabling"),
    "nic_numa_mismatch": ("gpu04", "nic-numa-affinity"),
    "pcie_x8": ("gpu05", "pcie-link-gpu"),
    "pcie_gen3": ("gpu06", "pcie-bandwidth-gpu"),  # idle GPUs sit at 2.5GT/s: only load shows Gen3
    "missing_dimm": ("gpu07", "dimm-population"),
    "ofed_version_drift": ("gpu08", "ofed-version"),
    "driver_version_drift": ("gpu09", "nvidia-driver-version"),
    "ofed_kernel_mismatch": ("gpu10", "ofed-kernel-match"),
    "etc_drift": ("gpu11", "etc-consistent"),
    "external_repo": ("gpu12", "mirror-only"),
    "clock_skew": ("gpu13", "clock-sync"),
    "ib_port_down": ("gpu14", "ib-ports-active"),
    "ib_rate_100": ("gpu15", "ib-ports-active"),
    "irq_affinity_wrong": ("gpu16", "irq-affinity"),
    "peermem_missing": ("gpu17", "nvidia-peermem"),
    "fw_reset_needed": ("gpu19", "link-type-ib"),
    "ofed_kmod_stale": ("gpu20", "ofed-kernel-match"),
    "irqbalance_unbanned": ("gpu21", "irq-affinity"),
    "irq_pinning_not_persisted": ("gpu22", "irq-affinity"),
}
SM_FAULTS = {"opensm_down": ("sm01", "opensm-active"), "pkey_missing": ("sm02", "partitions-conf")}
BEHAVIOUR_FAULTS = {"unreachable": "gpu02", "hang": "gpu03", "slow": "gpu04", "host_key_changed": "gpu05"}
COMPUTE_NODES = 22  # gpu01 and gpu18 stay healthy; gpu01 launches the fleet NCCL test

# Failures that follow from another step's fault, by design of the checks.
CONSEQUENCES = {
    "gpu-nic-topology": {"gpu04"},  # the moved NIC is SYS to its rail's GPUs
    "irq-affinity": {"gpu04"},  # its IRQs stayed on the designed node, the NIC did not
    "rail-cabling": {"gpu14"},  # a port without link is on no switch
    # the moved NIC's pair test runs bound to its designed node, now the far socket: every
    # transfer crosses the CPU interconnect (ib-write-bw binds to the measured node and passes)
    "ib-pair-bw": {"gpu04"},
    # one job over every node, split until the slow ones are named: a cable in the wrong
    # rail (-15 %), a NIC on the other socket (-25 %), a GPU link at x8 / Gen3 (-50 %)
    "nccl-inter-node": {"gpu03", "gpu04", "gpu05", "gpu06"},
    # inside a node: a GPU link at x8 / Gen3 halves the ring; the NIC on the other
    # socket (gpu04) does not matter there, NCCL inside a node uses no NIC
    "nccl-intra-node": {"gpu05", "gpu06"},
    # one GPU link at x8 / Gen3 slows every NCCL job its node is in: the split names the node
    "nccl-alltoall": {"gpu05", "gpu06"},
    # a GPU link at x8 / Gen3 halves its copies under load, and DCGM's pcie test sees it
    "gpu-p2p-bandwidth": {"gpu05", "gpu06"},
    "dcgm-diag": {"gpu05", "gpu06"},
}
FIXES = {
    "link-type-ib": ["gpu02", "gpu19"],
    "irq-affinity": ["gpu04", "gpu16", "gpu21", "gpu22"],
    "nvidia-peermem": ["gpu17"],
}


async def _compliant(directory):
    run = await LabRun.start(directory, nodes=2)
    try:
        await run.run(None)
        return run.table()
    finally:
        await run.stop()


async def _compute_faults(directory):
    faults = {host: [fault] for fault, (host, _) in COMPUTE_FAULTS.items()}
    run = await LabRun.start(directory, nodes=COMPUTE_NODES, faults=faults)
    try:
        await run.run(None)
        out = {"verify": run.table()}
        irqs_before = _irqs(run)
        for step_id, hosts in FIXES.items():
            await run.run([step_id], "apply", hosts=hosts)
        out["applied"] = run.table()
        out["irq_script"] = run.finished("irq-affinity", "apply", "gpu16").stdout
        out["fixed_state"] = _state(run)
        for step_id, hosts in FIXES.items():
            await run.run([step_id], "rollback", hosts=hosts)
            await run.run([step_id], hosts=hosts, again=True)
        out["rolled_back"] = run.table()
        out["rollback_state"] = _state(run)
        out["irqs_before"] = irqs_before
        return out
    finally:
        await run.stop()


def _irqs(run: LabRun) -> dict:
    """Every IRQ's affinity as the kernel reports it (irqbalance's doing included)."""
    return {
        h: {i.number: effective_cpus(run.node(h), i) for i in run.node(h).irqs} for h in FIXES["irq-affinity"]
    }


def _state(run: LabRun) -> dict:
    gpu02, gpu19 = run.node("gpu02"), run.node("gpu19")
    return {
        "gpu02_link_type": [c.link_type for c in gpu02.cards][0],
        "gpu19_mlx5_1": gpu19.link_type(gpu19.nic("mlx5_1")),
        "irqs": _irqs(run),
        "irqbalance_gpu21": (gpu21 := run.node("gpu21")).irqbalance.running
        and "--policyscript=" in gpu21.files["/etc/sysconfig/irqbalance"],
        "boot_unit_gpu22": "nic-irq-affinity" in run.node("gpu22").units_enabled,
        "gpu17_modules": list(run.node("gpu17").modules),
    }


async def _sm_faults(directory):
    faults = {host: [fault] for fault, (host, _) in SM_FAULTS.items()}
    run = await LabRun.start(directory, nodes=2, faults=faults)
    try:
        await run.run(None)
        out = {"verify": run.table()}
        conf_before = run.node("sm02").files.get("/etc/opensm/partitions.conf")
        await run.run(["opensm-active"], "apply", hosts=["sm01"])
        await run.run(["partitions-conf"], "apply", hosts=["sm02"])
        out["partitions_apply"] = run.finished("partitions-conf", "apply", "sm02")
        await run.run(["sm-master-standby", "ib-ports-active", "pkey-membership"], again=True)
        out["applied"] = run.table()
        out["opensm_fixed"] = (run.node("sm01").opensm.running, run.node("sm01").opensm.enabled)
        await run.run(["opensm-active", "partitions-conf"], "rollback", hosts=["sm01", "sm02"])
        await run.run(["opensm-active", "partitions-conf"], again=True)
        out["rolled_back"] = run.table()
        out["opensm_rolled_back"] = (run.node("sm01").opensm.running, run.node("sm01").opensm.enabled)
        out["conf_restored"] = run.node("sm02").files.get("/etc/opensm/partitions.conf") == conf_before
        return out
    finally:
        await run.stop()


async def _behaviour(directory):
    faults = {host: [fault] for fault, host in BEHAVIOUR_FAULTS.items()}
    run = await LabRun.start(directory, nodes=6, faults=faults, slow_seconds=3.0)
    try:
        await run.run(None, steps=[run.step("ssh-reachable", timeout=8)])
        out = {"patient": run.table()}
        await run.run(
            None, steps=[run.step("ssh-reachable", timeout=1.5)], hosts=["gpu04", "gpu06"], again=True
        )
        out["impatient"] = run.table()
        return out
    finally:
        await run.stop()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    return run_scenarios(
        tmp_path_factory.mktemp("labs"),
        {"compliant": _compliant, "compute": _compute_faults, "sm": _sm_faults, "behaviour": _behaviour},
    )


def _failing(table, step_id):
    return {h for h, (s, _) in table.get(step_id, {}).items() if s == "fail"}


def test_compliant_lab_passes_every_step(lab):
    table = lab["compliant"]
    automatic = {s.id for s in runbook().steps if not s.manual}
    assert set(table) == automatic and len(automatic) == 57
    bad = {(step, h): row for step, rows in table.items() for h, row in rows.items() if row[0] != "pass"}
    assert bad == {}


@pytest.mark.parametrize("fault", sorted(COMPUTE_FAULTS))
def test_compute_fault_is_caught_on_its_host_only(lab, fault):
    host, step_id = COMPUTE_FAULTS[fault]
    table = lab["compute"]["verify"]
    assert table[step_id][host][0] == "fail", table[step_id][host]
    same_step = {h for h, s in COMPUTE_FAULTS.values() if s == step_id}
    assert _failing(table, step_id) == same_step | CONSEQUENCES.get(step_id, set())


def test_fault_matrix_has_no_other_failure(lab):
    """Every step's failing hosts are exactly the injected faults' and their declared consequences."""
    table = lab["compute"]["verify"]
    for step_id in table:
        expected = {h for h, s in COMPUTE_FAULTS.values() if s == step_id} | CONSEQUENCES.get(step_id, set())
        assert _failing(table, step_id) == expected, step_id
    healthy = {step_id: rows["gpu18"] for step_id, rows in table.items() if "gpu18" in rows}
    assert {s: row for s, row in healthy.items() if row[0] != "pass"} == {}


REASONS = {
    "link_type_eth": "rail 1 NIC 0000:18:00.0 (mlx5_0) LINK_TYPE_P1: expected IB(1), found ETH(2)",
    "wrong_rail": "rail 1 NIC 0000:18:00.0 (mlx5_0): expected on leaf01, found on leaf02",
    "nic_numa_mismatch": "rail 3 NIC 0000:98:00.0 (mlx5_2) NUMA: expected 1, found 0",
    "pcie_x8": "LnkSta width expected x16, found x8 (downgraded) (speed 2.5GT/s; LnkCap 16GT/s x16)",
    "pcie_gen3": "GPU 5: host-to-device 12.95 GB/s, expected ≥ 20",
    "missing_dimm": "populated DIMMs: expected 16, found 15",
    "ofed_version_drift": "found 'MLNX_OFED_LINUX-23.07-0.5.1.2'",
    "driver_version_drift": "driver_version: expected '550.90.07', found '550.54.15'",
    "ofed_kernel_mismatch": "found '23.07-0.5.1'",
    "ofed_kmod_stale": "found '23.07-0.5.1'",
    "fw_reset_needed": "rail 2 NIC 0000:20:00.0 (mlx5_1) LINK_TYPE_P1: expected IB(1), found ETH(2)",
    "irqbalance_unbanned": "irqbalance is active and does not leave the NIC interrupts alone",
    "irq_pinning_not_persisted": "boot-time unit nic-irq-affinity: disabled, expected enabled",
    "etc_drift": "outliers gpu11",
    "external_repo": "developer.download.nvidia.com",
    "clock_skew": "system_time_abs_ms: expected ≤ 1.0, found 2350",
    "ib_port_down": "rail 2 NIC 0000:20:00.0 (mlx5_1) port 1: state Down",
    "ib_rate_100": "rail 4 NIC 0000:a0:00.0 (mlx5_3) port 1: rate 100, expected 200",
    "irq_affinity_wrong": (
        "rail 1 NIC 0000:18:00.0 (mlx5_0) (NUMA node 0, CPUs 0-31,64-95): 9 of 9 IRQs may run outside it"
    ),
    "peermem_missing": "/^nvidia_peermem\\s/, no match",
}


@pytest.mark.parametrize("fault", sorted(COMPUTE_FAULTS))
def test_compute_fault_reason_says_expected_and_found(lab, fault):
    host, step_id = COMPUTE_FAULTS[fault]
    assert REASONS[fault] in lab["compute"]["verify"][step_id][host][1]


def test_downstream_steps_wait_instead_of_failing(lab):
    table = lab["compute"]["verify"]
    assert table["ib-link-layer"]["gpu02"][0] == "blocked"  # needs link-type-ib
    assert table["ib-ports-active"]["gpu02"][0] == "blocked"
    assert table["ofed-kernel-match"]["gpu08"][0] == "blocked"  # needs ofed-version
    assert table["pkey-membership"]["gpu14"][0] == "blocked"  # needs ib-ports-active


@pytest.mark.parametrize("fault", sorted(SM_FAULTS))
def test_sm_fault_is_caught_on_its_node_only(lab, fault):
    host, step_id = SM_FAULTS[fault]
    table = lab["sm"]["verify"]
    assert _failing(table, step_id) == {host}, table[step_id]


def test_sm_faults_reasons_and_gating(lab):
    table = lab["sm"]["verify"]
    assert "active_state: expected 'active', found 'inactive'" in table["opensm-active"]["sm01"][1]
    assert "unit_file_state: expected 'enabled', found 'disabled'" in table["opensm-active"]["sm01"][1]
    assert "partition 0x0200 (storage) missing from partitions.conf" in table["partitions-conf"]["sm02"][1]
    # sm01's role is not judged while its OpenSM is down; sm02 took over and says so
    assert table["sm-master-standby"]["sm01"][0] == "blocked"
    assert (
        "sm02: expected STANDBY, found MASTER (MASTER is sm02; designed master sm01)"
        in table["sm-master-standby"]["sm02"][1]
    )
    # compute ports wait for every SM node's OpenSM, not just any
    assert {s for s, _ in table["ib-ports-active"].values()} == {"blocked"}


@pytest.mark.parametrize("fault", sorted(BEHAVIOUR_FAULTS))
def test_behaviour_faults_are_unknown_never_fail(lab, fault):
    host = BEHAVIOUR_FAULTS[fault]
    patient, impatient = lab["behaviour"]["patient"], lab["behaviour"]["impatient"]
    others = {h for h, (s, _) in patient["ssh-reachable"].items() if s != "pass"}
    assert others == {"gpu02", "gpu03", "gpu05"}  # slow answers within the timeout
    if fault == "slow":
        assert patient["ssh-reachable"][host][0] == "pass"
        assert impatient["ssh-reachable"][host][0] == "unknown"  # a shorter timeout than its delay
        assert impatient["ssh-reachable"]["gpu06"][0] == "pass"
    else:
        status, reason = patient["ssh-reachable"][host]
        assert status == "unknown" and BEHAVIOUR_REASONS[fault] in reason, (status, reason)


BEHAVIOUR_REASONS = {
    "unreachable": "connection refused",
    "hang": "timeout after 8s",
    "host_key_changed": "host key for gpu05 changed",
}


def test_applies_fix_their_faults(lab):
    applied = lab["compute"]["applied"]
    for step_id, hosts in FIXES.items():
        for h in hosts:
            assert applied[step_id][h][0] == "pass", (step_id, h, applied[step_id][h])
    state = lab["compute"]["fixed_state"]
    assert state["gpu02_link_type"] == [1]  # IB after the owed reboot
    # a warm reboot would not have done it on gpu19's card: the apply's mlxfwreset did
    assert state["gpu19_mlx5_1"] == 1
    assert state["irqbalance_gpu21"] is True and state["boot_unit_gpu22"] is True
    assert "nvidia_peermem" in state["gpu17_modules"]


def test_irq_script_is_generated_from_the_measured_topology(lab):
    script = lab["compute"]["irq_script"]
    assert script.startswith("#!/bin/sh\n# NIC IRQ affinity generated by runbook")
    assert "# 0000:18:00.0 (mlx5_0): NUMA node 0, local CPUs 0-31,64-95" in script
    # by node, the IRQs looked up when it runs (they change between boots)
    assert "for i in $(ls $p/msi_irqs); do echo $cpus > /proc/irq/$i/smp_affinity_list; done" in script
    # gpu04's mlx5_2 sits on node 0 now (nic_numa_mismatch): its IRQs follow the measurement
    fixed = lab["compute"]["fixed_state"]["irqs"]["gpu04"]
    assert {fixed[n] for n in range(152, 161)} == {"0-31,64-95"}


def test_rollbacks_restore_the_recorded_state(lab):
    rolled = lab["compute"]["rolled_back"]
    for step_id, hosts in FIXES.items():
        for h in hosts:
            assert rolled[step_id][h][0] == "fail", (step_id, h, rolled[step_id][h])
    state = lab["compute"]["rollback_state"]
    assert state["gpu02_link_type"] == [2]  # back to ETH after the rollback's reboot
    assert state["irqs"] == lab["compute"]["irqs_before"]
    assert state["irqbalance_gpu21"] is False and state["boot_unit_gpu22"] is False
    assert "nvidia_peermem" not in state["gpu17_modules"]


def test_sm_applies_fix_and_rollbacks_restore(lab):
    sm = lab["sm"]
    assert sm["applied"]["opensm-active"]["sm01"][0] == "pass"
    assert sm["opensm_fixed"] == (True, True)
    assert sm["applied"]["sm-master-standby"]["sm01"][0] == "pass"
    assert sm["opensm_rolled_back"] == (False, False)
    assert sm["rolled_back"]["opensm-active"]["sm01"][0] == "fail"
    apply = sm["partitions_apply"]
    assert apply.status == "pending", apply.reason  # applied, re-verify pending
    assert "storage=0x200, ipoib, mtu=5, defmember=full :" in apply.stdout  # the written file is shown
    assert sm["applied"]["partitions-conf"]["sm02"][0] == "pass"
    assert sm["applied"]["pkey-membership"]["gpu01"][0] == "pass"
    assert sm["conf_restored"] is True
    assert sm["rolled_back"]["partitions-conf"]["sm02"][0] == "fail"
