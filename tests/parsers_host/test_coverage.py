"""Every fixture file in the host-side directories has stated expectations, and every
host parser refuses the other tools' real outputs with a ParseError (no crash, no
made-up record)."""

from __future__ import annotations

import pytest

from runbook.parsers import ParseError, names, parse

from . import (
    test_dcgmi_diag,
    test_dmesg_xid,
    test_dmidecode,
    test_gpu_bandwidth,
    test_ip_link,
    test_lspci,
    test_nccl_debug,
    test_nccl_tests,
    test_numactl,
    test_nvidia_smi_csv,
    test_nvidia_smi_q,
    test_nvidia_smi_table,
    test_nvidia_smi_topo,
    test_services,
    test_sysfs_infiniband,
    test_versions,
)
from .helpers import fixture_names, fixtures_root, read

MODULES = (
    test_dcgmi_diag,
    test_gpu_bandwidth,
    test_ip_link,
    test_dmesg_xid,
    test_dmidecode,
    test_lspci,
    test_nccl_debug,
    test_nccl_tests,
    test_numactl,
    test_nvidia_smi_csv,
    test_nvidia_smi_q,
    test_nvidia_smi_table,
    test_nvidia_smi_topo,
    test_services,
    test_sysfs_infiniband,
    test_versions,
)
COVERED = {d: set(expected) for m in MODULES for d, expected in m.COVERS.items()}

# The host parsers and the fixture directories that are theirs.
OWN = {
    "nvidia-smi-topo": {"nvidia-smi-topo-m"},
    "nvidia-smi": {"nvidia-smi"},
    "nvidia-smi-q": {"nvidia-smi-q", "nvidia-smi-q-ecc"},
    "nvidia-smi-csv": {"nvidia-smi-query-gpu-csv"},
    "lspci-vv": {"lspci-vv", "lspci-acs"},
    "lspci": {"lspci-grep-mellanox", "lspci-grep-nvidia"},
    "dmidecode-memory": {"dmidecode-t-memory"},
    "dmidecode-bios": {"dmidecode-t-bios"},
    "numactl": {"numactl-H"},
    "modinfo": {"modinfo-mlx5_core"},
    "ofed_info": {"ofed_info", "ofed_info-s"},
    "ethtool-i": {"ethtool-i"},
    "sysfs-link-layer": {"sysfs-infiniband-link_layer"},
    "sysfs-numa-node": {"sysfs-infiniband-numa_node"},
    "sysfs-pkeys": {"sysfs-infiniband-pkeys"},
    "sysfs-port-state": {"sysfs-infiniband-port-state"},
    "nccl-tests": {"nccl-tests", "nccl-alltoall"},
    "nccl-debug": {"nccl-debug"},
    "dmesg-xid": {"dmesg-xid"},
    "dcgmi-diag": {"dcgmi-diag"},
    "ip-link": {"ip-link-ipoib"},
    "nvbandwidth": {"nvbandwidth"},  # the folder holds the next two tools' outputs too
    "p2p-bandwidth": {"nvbandwidth"},
    "nvidia-smi-topo-p2p": {"nvbandwidth"},
    "irqbalance": {"irqbalance"},
    "tuned": {"tuned"},
    "proc-cmdline": {"proc-cmdline"},
    "chronyc-tracking": set(),
    "os-release": set(),
}
# Pairs where the foreign text is, honestly, a valid reading: a one-column
# `--format=csv,noheader` output is any line of words (see nvidia_smi_csv.py).
AMBIGUOUS = {
    ("nvidia-smi-csv", "opensm-log/ibsim-lab-opensm-a2-stdout-grep-state-STANDBY.txt"),
    (
        "nvidia-smi-csv",
        "ibdiagnet-pc/ibdiagnet2-rail_validation-Rail-Optimized-Topology-"
        "Validation-finished-successfully-section.txt",
    ),
    (
        "nvidia-smi-csv",
        "tuned/Rocky-tuned-adm-active-service-not-enabled-DBus-error-plus-No-current-active-profile.txt",
    ),
}


def test_every_host_directory_is_covered():
    assert set(COVERED) == set().union(*OWN.values())


@pytest.mark.parametrize("directory", sorted(COVERED))
def test_every_file_has_stated_expectations(directory):
    on_disk = fixture_names(directory)
    missing = sorted(on_disk - COVERED[directory])
    stale = sorted(COVERED[directory] - on_disk)
    assert not missing, f"new fixture files without expected values in the tests: {missing}"
    assert not stale, f"tests name files that are not in {directory}: {stale}"


def test_every_host_parser_is_registered():
    assert set(OWN) <= set(names())


def _foreign_files():
    root = fixtures_root()
    return sorted(
        f"{d.name}/{f.name}" for d in root.iterdir() if d.is_dir() for f in d.iterdir() if f.is_file()
    )


@pytest.mark.parametrize("parser", sorted(OWN))
def test_other_tools_output_is_refused(parser):
    accepted = []
    for rel in _foreign_files():
        directory, name = rel.split("/")
        if directory in OWN[parser] or (parser, rel) in AMBIGUOUS:
            continue
        try:
            parse(parser, read(directory, name))
        except ParseError:
            continue
        accepted.append(rel)
    assert not accepted, f"{parser} made a record out of another tool's output: {accepted}"


def test_every_fixture_folder_is_claimed_by_a_parser_test():
    """Host folders here, IB folders in tests/parsers_ib: together they claim every folder."""
    from ..parsers_ib._fixtures import DIRECTORIES

    on_disk = {d.name for d in fixtures_root().iterdir() if d.is_dir()}
    unclaimed = sorted(on_disk - set(COVERED) - set(DIRECTORIES))
    assert not unclaimed, f"fixture folders no parser test reads: {unclaimed}"
