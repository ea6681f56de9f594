"""irqbalance / systemctl-status, tuned, proc-cmdline on every real capture."""

from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse

from .helpers import check_fixture, read

IRQ = "irqbalance"
EXPECTED_IRQ = {
    "AKS-Ubuntu22.04-node-irqbalance-1.8.0-systemctl-status-active-running-7s-journal-line-no-blank-separator.txt": {
        "unit": "irqbalance.service",
        "enabled": True,
        "active": True,
        "sub_state": "running",
        "preset": "enabled",
        "main_pid": 11116,
        "unit_file": "/lib/systemd/system/irqbalance.service",
        "command": "/usr/sbin/irqbalance --foreground",
        "since": "Fri 2023-10-27 19:58:00 UTC",
        "journal": [
            "Oct 27 19:58:00 aks-nodepool1-24398294-vmss000000 systemd[1]: Started irqbalance daemon."
        ],
    },
    "CentOS7-RT-kernel-MTCA-systemctl-status-irqbalance-disabled-inactive-dead-old-format-vendor-preset-3-lines.txt": {
        "enabled": False,
        "unit_file_state": "disabled",
        "preset": "enabled",
        "active": False,
        "active_state": "inactive",
        "sub_state": "dead",
        "main_pid": None,
        "journal": [],
    },
    "OpenShift-NVIDIA-lab-node-aarch64-RHEL9-irqbalance-1.9.2-systemctl-status-active-running-enabled-preset-enabled.txt": {
        "enabled": True,
        "active": True,
        "preset": "enabled",
        "main_pid": 14874,
        "since": "Thu 2024-09-12 19:20:27 UTC",
        "description": "irqbalance daemon",
    },
    "RHEL9-VM-DUT-systemctl-status-irqbalance-disabled-inactive-dead-hollow-circle-preset-enabled.txt": {
        "unit": "irqbalance.service",
        "enabled": False,
        "active": False,
        "sub_state": "dead",
        "preset": "enabled",
        "loaded": "loaded",
    },
}
TUNED = "tuned"
EXPECTED_TUNED = {
    "CentOS7-RT-kernel-MTCA-tuned-adm-active-realtime-profile-single-line.txt": {
        "profile": "realtime",
        "profiles": ["realtime"],
        "daemon_running": None,
    },
    "Rocky-tuned-adm-active-service-not-enabled-DBus-error-plus-No-current-active-profile.txt": {
        "profile": None,
        "profiles": [],
        "daemon_running": False,
    },
    "insights-core-testdata-RHEL6-tuned-adm-active-default-profile-Service-tuned-ktune-disabled-stopped.txt": {
        "profile": "default",
        "services": {"tuned": "disabled, stopped", "ktune": "disabled, stopped"},
    },
}
CMDLINE = "proc-cmdline"
_ISOL = [1, 2, 6, 8, 10, 12, 33, 34, 38, 40, 42, 44]
EXPECTED_CMDLINE = {
    "AMD-ThreadripperPRO-5975WX-NVIDIA535-MLNX_OFED24.01-GPUDirect-Ubuntu22.04-6.5.0-44-iommu-pt-pci-nommconf-realloc-off-isolcpus-tsc-reliable.txt": {
        "image": "/boot/vmlinuz-6.5.0-44-generic",
        "iommu": {"intel_iommu": None, "amd_iommu": None, "iommu": "pt"},
        "values.pci": ["nommconf", "realloc=off"],
        "params.pci": "realloc=off",
        "isolcpus": _ISOL,
        "nohz_full": _ISOL,
        "flags": ["ro", "quiet", "splash"],
    },
    "FDio-CSIT-Atom-Denverton-Ubuntu16.04-HWE-4.15.0-36-intel_iommu-on-iommu-pt-1G-hugepages-isolcpus-quiet-splash.txt": {
        "iommu.intel_iommu": "on",
        "iommu.iommu": "pt",
        "isolcpus": list(range(1, 12)),
        "hugepages": {"default_size": "1G", "size": "1G", "count": 8},
        "params.nmi_watchdog": "0",
    },
    "FDio-CSIT-Xeon-Haswell-2S-testbed-Ubuntu18.04-4.15.0-36-intel_iommu-on-iommu-pt-isolcpus-hpet-disable-serial-console.txt": {
        "image": "/vmlinuz-4.15.0-36-generic",
        "iommu.intel_iommu": "on",
        "isolcpus": list(range(1, 18)) + list(range(19, 36)),
        "values.console": ["tty0", "ttyS0,115200n8"],
        "params.console": "ttyS0,115200n8",
        "hugepages.count": None,
        "flags": ["ro", "nosoftlockup"],
    },
}
COVERS = {IRQ: EXPECTED_IRQ, TUNED: EXPECTED_TUNED, CMDLINE: EXPECTED_CMDLINE}


@pytest.mark.parametrize("name", sorted(EXPECTED_IRQ))
def test_irqbalance(name):
    check_fixture("irqbalance", IRQ, name, EXPECTED_IRQ[name])
    assert parse("systemctl-status", read(IRQ, name)) == parse("irqbalance", read(IRQ, name))


@pytest.mark.parametrize("name", sorted(EXPECTED_TUNED))
def test_tuned(name):
    check_fixture("tuned", TUNED, name, EXPECTED_TUNED[name])


@pytest.mark.parametrize("name", sorted(EXPECTED_CMDLINE))
def test_proc_cmdline(name):
    check_fixture("proc-cmdline", CMDLINE, name, EXPECTED_CMDLINE[name])


def test_dotted_parameter_names():  # keys with dots cannot be stated as 'a.b' paths above
    name = next(iter(EXPECTED_CMDLINE))
    record = parse("proc-cmdline", read(CMDLINE, name))
    assert record["params"]["ipv6.disable"] == "1" and record["params"]["vt.handoff"] == "7"


OPENSM_STATUS = (
    "opensm-conf",
    "systemctl-status-opensm-OpenSM-3.3.20-two-instances-one-Exiting-SM-"
    "other-Entering-STANDBY-state-journal-lines.txt",
)
EXPECTED_SYSTEMCTL = {OPENSM_STATUS[1]: {"unit": "opensm.service", "active": True}}


def test_systemctl_status_of_opensm_and_irqbalance_refusing_it():
    record = parse("systemctl-status", read(*OPENSM_STATUS))
    assert record["unit"] == "opensm.service" and record["active"] is True
    assert len(record["journal"]) >= 3 and any("STANDBY" in j for j in record["journal"])
    with pytest.raises(ParseError, match="not irqbalance"):
        parse("irqbalance", read(*OPENSM_STATUS))


def test_crlf_and_trailing_spaces():
    name = sorted(EXPECTED_IRQ)[0]
    text = read(IRQ, name)
    assert parse("irqbalance", text.replace("\n", "  \r\n")) == parse("irqbalance", text)


def test_failed_unit_and_not_found():
    failed = (
        "× irqbalance.service - irqbalance daemon\n"
        "     Loaded: loaded (/usr/lib/systemd/system/irqbalance.service; enabled; preset: enabled)\n"
        "     Active: failed (Result: exit-code) since Mon 2024-01-01 10:00:00 UTC; 2min ago\n"
    )
    record = parse("irqbalance", failed)
    assert (record["active"], record["active_state"], record["enabled"]) == (False, "failed", True)
    absent = parse("irqbalance", "Unit irqbalance.service could not be found.\n")
    assert (absent["loaded"], absent["enabled"], absent["active"]) == ("not-found", False, False)
    masked = (
        "○ irqbalance.service\n     Loaded: masked (Reason: Unit irqbalance.service is masked.)\n"
        "     Active: inactive (dead)\n"
    )
    record = parse("irqbalance", masked)
    assert (record["loaded"], record["enabled"], record["unit_file_state"]) == ("masked", False, "masked")
    with pytest.raises(ParseError, match="Active"):
        parse("irqbalance", "     Loaded: loaded (/usr/lib/systemd/system/irqbalance.service; enabled)\n")


def test_garbage_is_refused():
    for parser in ("irqbalance", "tuned", "proc-cmdline"):
        with pytest.raises(ParseError):
            parse(parser, "lorem ipsum\ndolor sit amet\n")


def test_tuned_daemon_stopped_on_rhel7_shows_the_preset():
    out = (
        "It seems that tuned daemon is not running, preset profile is not activated.\n"
        "Preset profile: throughput-performance\n"
    )
    record = parse("tuned", out)
    assert (record["profile"], record["daemon_running"], record["preset"]) == (
        None,
        False,
        "throughput-performance",
    )


def test_proc_cmdline_with_its_prompt_line():
    name = sorted(EXPECTED_CMDLINE)[1]
    text = read(CMDLINE, name)
    assert parse("proc-cmdline", "$ cat /proc/cmdline\n" + text) == parse("proc-cmdline", text)
