"""The shipped runbook (steps/*.yaml) against its contract: the step ids
customers and logs refer to, structure, inventory vars, command rendering and
shell-quoting safety."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from runbook import parsers
from runbook.criteria.design import comparators
from runbook.definition.lint import lint
from runbook.definition.template import PLACEHOLDER, render_command
from runbook.inventory.load import select_hosts

from .helpers import inventory, runbook, seed_vars

CONTRACT = {
    "10-preflight.yaml": ["ssh-reachable", "hostname-matches", "clock-sync", "os-kernel-consistent"],
    "20-hardware.yaml": [
        "dimm-population",
        "gpu-inventory",
        "pcie-link-gpu",
        "pcie-bandwidth-gpu",
        "pcie-link-nic",
        "mellanox-functions",
    ],
    "30-nic-mode.yaml": ["mst-started", "link-type-ib", "ib-link-layer"],
    "40-software.yaml": [
        "mirror-only",
        "ofed-version",
        "ofed-kernel-match",
        "nvidia-driver-version",
        "cuda-version",
        "etc-consistent",
        "nvidia-peermem",
    ],
    "50-topology.yaml": ["gpu-numa-affinity", "nic-numa-affinity", "gpu-nic-topology", "irq-affinity"],
    "60-fabric.yaml": [
        "opensm-active",
        "sm-master-standby",
        "sm-seen-from-compute",
        "partitions-conf",
        "ib-ports-active",
        "pkey-membership",
        "rail-cabling",
        "ipoib-storage",
    ],
    "66-fabric-acceptance.yaml": [
        "link-ber",
        "leaf-spine-links",
        "ib-pair-bw",
        "ib-cross-rail-bw",
        "nccl-alltoall",
        "fabric-health",  # after the pair and fleet tests: their traffic is its soak
        "sm-failover-drill",
    ],
    "70-baseline.yaml": ["ib-write-bw", "nccl-intra-node", "nccl-inter-node"],
    # issue 15: GPU health, platform, firmware, OS settings, storage plane, burn-in
    "25-platform.yaml": ["bios-version", "hca-firmware", "pcie-acs-disabled", "iommu-mode"],
    "45-gpu-health.yaml": [
        "gpu-persistence-power",
        "gpu-ecc-health",
        "gpu-xid-scan",
        "gpu-bar1",
        "gpu-vbios",
        "dcgm-diag",
        "gpu-p2p-bandwidth",
    ],
    "48-os-settings.yaml": ["memlock-unlimited", "tuned-profile"],
    "65-storage.yaml": ["storage-reachable", "storage-mounts"],
    "80-burn-in.yaml": ["gpu-burn-in"],
    "90-handover.yaml": ["customer-walkthrough"],
}
# Applies the brief asks for (the tool can fix these); every other step only verifies.
APPLIES = {
    "link-type-ib",
    "nvidia-peermem",
    "irq-affinity",
    "opensm-active",
    "partitions-conf",
    "pcie-acs-disabled",
    "iommu-mode",
    "gpu-persistence-power",
    "tuned-profile",
}


def test_every_contract_id_is_in_its_phase_file_in_order():
    found = {}
    for phase in runbook().phases:
        found.setdefault(phase.file.rsplit("/", 1)[-1], []).extend(s.id for s in phase.steps)
    assert found == CONTRACT


def test_structure_why_hints_rollback():
    for step in runbook().steps:
        assert len(step.why) > 60, step.id
        assert step.hints and all(len(h) > 20 for h in step.hints), step.id
        assert bool(step.apply) == bool(step.rollback), step.id
        if not step.manual:
            assert step.verify.expect, f"{step.id}: a verify without criteria passes on anything"
    assert {s.id for s in runbook().steps if s.apply} == APPLIES


def test_link_type_apply_owes_a_reboot_and_so_does_its_rollback():
    step = runbook().step("link-type-ib")
    assert step.apply.then == "reboot" and step.rollback.then == "reboot"


def test_every_template_var_is_defined_for_every_targeted_host():
    assert [str(p) for p in lint(runbook(), inventory())] == []


def test_design_lists_agree_with_each_other():
    v = seed_vars("gpu01")
    assert v["compute_devices"] == [n["dev"] for n in v["compute_nics"]]
    assert set(v["ib_mode_port2_devices"]) <= set(v["ib_mode_devices"])
    assert {n["dev"] for n in v["compute_nics"] + v["storage_nics"]} <= set(v["ib_mode_devices"])
    assert len(v["ib_mode_devices"]) == v["mellanox_functions"]
    assert sorted(g for n in v["compute_nics"] for g in n["gpus"]) == list(range(v["gpus_per_node"]))
    plan = parsers.parse("partitions-conf", seed_vars("sm01")["partitions_conf"])
    compute_hosts = select_hosts(inventory(), "compute")
    members = {
        p["pkey"]: {m["guid"] for m in p["members"] if m["membership"] == "full"} for p in plan["partitions"]
    }
    assert len(members["0x0100"]) == len(compute_hosts) * len(v["compute_nics"])
    # the storage partition: every node's storage ports plus the storage targets
    assert len(v["storage_nics"]) == len(v["ib_mode_devices"]) - len(v["compute_nics"])
    assert members["0x0200"] == (
        {m for m in members["0x0200"] if m not in v["storage_target_guids"]} | set(v["storage_target_guids"])
    )
    assert len(members["0x0200"]) == len(compute_hosts) * len(v["storage_nics"]) + len(
        v["storage_target_guids"]
    )
    # every NIC keyed by a distinct PCI address
    pcis = [n["pci"] for n in v["compute_nics"] + v["storage_nics"]]
    assert len(set(pcis)) == len(pcis) == v["mellanox_functions"]
    assert not members["0x0100"] & members["0x0200"]
    assert comparators()["partitions"].func(plan, seed_vars("sm01")) == []
    assert select_hosts(inventory(), "nccl_launcher") and set(
        select_hosts(inventory(), "nccl_launcher")
    ) <= set(compute_hosts)


# Steps on compute nodes that wait for an SM-node step (gated on ALL SM nodes):
# only where what they measure is the SM's doing.
CROSS_GROUP_NEEDS = {
    ("ib-ports-active", "opensm-active"),
    ("pkey-membership", "partitions-conf"),
    (
        "leaf-spine-links",
        "opensm-active",
    ),  # links are Active only once an SM runs (none on the site: no wait)
}


def test_needs_across_host_groups_are_deliberate():
    inv = inventory()
    crossing = set()
    for step in runbook().steps:
        hosts = set(select_hosts(inv, step.hosts))
        for need in step.needs:
            if not hosts <= set(select_hosts(inv, runbook().step(need).hosts)):
                crossing.add((step.id, need))
    assert crossing == CROSS_GROUP_NEEDS


def _quote_context(template: str, pos: int) -> str:
    """'none', 'single', 'double' or 'subst' (inside $( ) within double quotes) at pos."""
    stack: list[str] = []
    i = 0
    while i < pos:
        c = template[i]
        top = stack[-1] if stack else None
        if top == "single":
            if c == "'":
                stack.pop()
        elif c == "\\":
            i += 1
        elif c == "'" and top != "double":
            stack.append("single")
        elif c == '"':
            if top == "double":
                stack.pop()
            else:
                stack.append("double")
        elif template.startswith("$((", i):
            stack.append("arith")  # expanded like "...", and bash evaluates what it finds
            i += 2
        elif template.startswith("$(", i):
            stack.append("subst")
            i += 1
        elif template.startswith("))", i) and top == "arith":
            stack.pop()
            i += 1
        elif c == ")" and top == "subst":
            stack.pop()
        i += 1
    return stack[-1] if stack else "none"


def _commands():
    for step in runbook().steps:
        for name in ("verify", "apply", "rollback"):
            action = getattr(step, name)
            if action:
                yield step.id, name, action.run


@pytest.mark.parametrize(
    "step_id,action,template",
    list(_commands()),
    ids=lambda x: x if isinstance(x, str) and len(x) < 30 else None,
)
def test_every_placeholder_is_a_plain_shell_word(step_id, action, template):
    """A value substituted inside "..." would have its shell quoting undone."""
    for m in PLACEHOLDER.finditer(template):
        assert _quote_context(template, m.start()) in ("none", "subst"), (step_id, action, m.group(0))


def test_quote_scanner_itself():
    assert _quote_context('echo "{{ x }}"', 7) == "double"
    assert _quote_context("echo '{{ x }}'", 7) == "single"
    assert _quote_context('h="$(echo {{ x }})"', 11) == "subst"
    assert _quote_context("for d in {{ x }}; do", 9) == "none"
    assert _quote_context("n=$(( {{ x }} * 2 ))", 6) == "arith"


def test_a_hostile_inventory_value_stays_one_argument():
    v = dict(seed_vars("gpu01"), ib_mode_pci=["0000:18:00.0; touch /tmp/pwned"])
    cmd = render_command(runbook().step("link-type-ib").verify.run, v)
    assert "for d in '0000:18:00.0; touch /tmp/pwned'; do" in cmd


def _before(step_id: str, text: str):
    return parsers.parse(runbook().step(step_id).verify.parse, text)


def test_rollbacks_render_from_the_recorded_before():
    v = seed_vars("gpu01")
    mlx = "".join(
        f"\nDevice #1:\n----------\n\nDevice:         {d}\n\nConfigurations:      Default   Current   "
        f"Next Boot\n         LINK_TYPE_P1         ETH(2)    {c}    {c}\n"
        for d, c in (("0000:18:00.0", "IB(1)"), ("0000:a0:00.0", "ETH(2)"))
    )
    cmd = render_command(
        runbook().step("link-type-ib").rollback.run, dict(v, before=_before("link-type-ib", mlx))
    )
    # the cards are addressed by PCI address: its three ':' fields, then the setting
    assert (
        "for r in 0000:18:00.0:LINK_TYPE_P1=1 0000:a0:00.0:LINK_TYPE_P1=2; do "
        "mlxconfig -y -d $(echo $r | cut -d: -f1-3) set $(echo $r | cut -d: -f4); done" in cmd
    )
    irq = (
        "irqbalance active active enabled enabled\nirqbalance args\nboot unit nic-irq-affinity disabled\n"
        "mlx5_0 numa_node 0 local_cpulist 0-31\nmlx5_0 irq 120 0-31\nmlx5_0 irq 121 40\n"
    )
    cmd = render_command(
        runbook().step("irq-affinity").rollback.run, dict(v, before=_before("irq-affinity", irq))
    )
    assert "for r in 120=0-31 121=40; do echo $r | cut -d= -f2 > /proc/irq/$(echo $r | cut -d= -f1)/" in cmd
    assert "if [ active = active ]; then systemctl restart irqbalance" in cmd
    assert "if [ disabled = enabled ]; then systemctl enable $u; else systemctl disable $u; fi" in cmd
    sm = "LoadState=loaded\nActiveState=inactive\nUnitFileState=enabled\n"
    cmd = render_command(
        runbook().step("opensm-active").rollback.run,
        dict(seed_vars("sm01"), before=_before("opensm-active", sm)),
    )
    assert 'if [ inactive != active ] && [ "$(systemctl is-active $u)" = active ]; then' in cmd
    assert "if [ enabled = enabled ]; then systemctl enable $u; fi" in cmd


def test_partitions_apply_writes_the_plan_as_one_quoted_word():
    v = seed_vars("sm01")
    cmd = render_command(runbook().step("partitions-conf").apply.run, dict(v, before={}))
    assert "printf '%s' '# /etc/opensm/partitions.conf (managed)" in cmd
    assert "    0xb8599f0310003006=full;\n' > $conf" in cmd


def test_every_parser_named_by_a_step_reads_something():
    for step in runbook().steps:
        for action in filter(None, (step.verify, step.apply, step.rollback)):
            if action.parse:
                assert parsers.get(action.parse), step.id


def _rendered():
    """Every command of the runbook as it would run on each kind of host."""
    befores = {
        "link-type-ib": {"restore": ["0000:a0:00.0:LINK_TYPE_P1=2"]},
        "irq-affinity": {
            "restore": ["121=0"],
            "irqbalance": {"active": "active", "enabled": "enabled"},
            "boot_unit": {"name": "nic-irq-affinity", "enabled": ""},
        },
        "opensm-active": {"unit_file_state": "enabled", "active_state": "active"},
    }
    for step in runbook().steps:
        hosts = select_hosts(inventory(), step.hosts)
        host = hosts[0]
        kind = {}  # what a step kind adds (docs/step-kinds.md)
        if step.pairs is not None:
            nic = seed_vars(host)["compute_nics"][0]
            kind = {
                "nic": nic,
                "peer_nic": nic,
                "rail": nic["rail"],
                "port": 18516,
                "peer": dict(seed_vars(hosts[1]), name=hosts[1], address=hosts[1]),
            }
        if step.launch is not None:
            kind = {"launch_hosts": hosts, "launch_count": len(hosts)}
        for name in ("verify", "apply", "rollback"):
            action = getattr(step, name)
            if action:
                v = dict(seed_vars(host), before=befores.get(step.id, {}), **kind)
                yield f"{step.id}:{name}", render_command(action.run, v)
        if step.pairs is not None:
            for name, text in (("server", step.pairs.server), ("cleanup", step.pairs.cleanup)):
                yield f"{step.id}:{name}", render_command(text, dict(seed_vars(hosts[1]), **kind))


@pytest.mark.skipif(not shutil.which("bash"), reason="bash not installed")
def test_every_rendered_command_is_valid_bash():
    for where, cmd in _rendered():
        res = subprocess.run(["bash", "-n", "-c", cmd], capture_output=True, text=True, timeout=10)
        assert res.returncode == 0, (where, res.stderr)
