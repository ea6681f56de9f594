"""modinfo, ethtool-i and ofed_info (-s and full) on every real capture."""

from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse

from .helpers import check_fixture, read

MODINFO = "modinfo-mlx5_core"
FULL_MODINFO = "MLNX_OFED-24.01-0.3.3-Debian12-6.1.0-20-full.txt"
EXPECTED_MODINFO = {
    FULL_MODINFO: {
        "filename": "/lib/modules/6.1.0-20-amd64/updates/dkms/mlx5_core.ko",
        "version": "24.01-0.3.3",
        "srcversion": "59290B9C495B89FC195B001",
        # the real line ends with a space; the value is stripped
        "vermagic": "6.1.0-20-amd64 SMP preempt mod_unload modversions",
        "kernel_release": "6.1.0-20-amd64",
        "out_of_tree": True,
        "basedon": "Korg 6.3-rc3",
        "depends": ["mlx_compat", "mlxdevm", "psample", "tls", "pci-hyperv-intf", "mlxfw"],
        "alias.0": "auxiliary:mlx5_core.eth-rep",
        "alias.22": "auxiliary:mlx5_core.sf",
        "parms.probe_vf": "probe VFs or not, 0 = not probe, 1 = probe. Default = 1 (bool)",
        "sig_hashalgo": "sha256",
        "name": "mlx5_core",
    },
    "MLNX_OFED-24.01-0.3.3-grep-version-3-lines.txt": {
        "version": "24.01-0.3.3",
        "srcversion": "59290B9C495B89FC195B001",
        "vermagic": "6.1.0-20-amd64 SMP preempt mod_unload modversions",
        "kernel_release": "6.1.0-20-amd64",
        "out_of_tree": None,
        "depends": [],
    },
}
ETHTOOL = "ethtool-i"
EXPECTED_ETHTOOL = {
    "mlx5_core-DOCA-OFED-24.07-0.6.1-CX4Lx-fw14.28.2006-bond-slave.txt": {
        "driver": "mlx5_core",
        "version": "24.07-0.6.1",
        "firmware_version": "14.28.2006 (MT_2420110034)",
        "firmware": "14.28.2006",
        "psid": "MT_2420110034",
        "bus_info": "0000:3b:00.0",
        "expansion_rom_version": "",
        "supports_priv_flags": True,
        "supports_eeprom_access": False,
    },
    "mlx5_core-INBOX-kernel-driver-3.0-1-January-2015-CX4Lx-fw14.23.txt": {
        "driver": "mlx5_core",
        "version": "3.0-1 (January 2015)",
        "firmware": "14.23.1020",
        "psid": None,
        "bus_info": "0000:af:00.0",
        "supports_test": False,
    },
    "mlx5_core-MLNX_OFED-5.1-2.3.7-CX4Lx-fw14.30.1004.txt": {
        "version": "5.1-2.3.7",
        "firmware": "14.30.1004",
        "supports_test": True,
        "bus_info": "0000:3b:00.0",
    },
}
OFED_S = "ofed_info-s"
EXPECTED_OFED_S = {
    "MLNX_OFED-23.07-0.5.1.2-colon.txt": {
        "version": "MLNX_OFED_LINUX-23.07-0.5.1.2",
        "release": "23.07-0.5.1.2",
        "distro": "MLNX_OFED_LINUX",
        "full": False,
        "components": [],
        "installed_packages": None,
    },
    "MLNX_OFED-4.4-2.0.7.0-ConnectX-3.txt": {
        "version": "MLNX_OFED_LINUX-4.4-2.0.7.0",
        "release": "4.4-2.0.7.0",
        "base": None,
    },
    "MLNX_OFED-5.4-3.5.8.0-dgx-ucx-docs.txt": {
        "version": "MLNX_OFED_LINUX-5.4-3.5.8.0",
        "release": "5.4-3.5.8.0",
    },
}
OFED = "ofed_info"
EXPECTED_OFED = {
    "MLNX_OFED-5.0-2.1.8.0-RHEL-full-srpm-list-and-installed-packages.txt": {
        "version": "MLNX_OFED_LINUX-5.0-2.1.8.0",
        "release": "5.0-2.1.8.0",
        "base": "OFED-5.0-2.1.8",
        "full": True,
        "components.0": {
            "name": "ar_mgr",
            "commit": None,
            "source": "/sw/release/mlnx_ofed/IBHPC/MLNX_OFED_LINUX-5.0-1.0.0.0/SRPMS/"
            "ar_mgr-1.0-0.49.MLNX20200216.g4ea049f.50100.0.src.rpm",
        },
        # "mlnx-nfsrdma:" follows mlnx-iproute2's commit line with no blank line between
        "components.32.name": "mlnx-nfsrdma",
        "components.31.commit": "766bdabfca4382539a642fc20e762d2461fd80d4",
        "components.57.name": "rshim",
        "components.57.source": "mlnx_ofed_soc/rshim-1.18-0.gb99e894.src.rpm",
        "installed_packages.0": {"name": "kmod-mlnx-ofa_kernel"},
        "installed_packages.15": {"name": "rdma-core"},
    },
    "MLNX_OFED-5.0-2.1.8.0-Ubuntu-dpkg-installed-packages-component-list-omitted.txt": {
        "version": "MLNX_OFED_LINUX-5.0-2.1.8.0",
        "base": "OFED-5.0-2.1.8",
        "components": [],
        "installed_packages.0": {
            "name": "ar-mgr",
            "version": "1.0-0.49.MLNX20200216.g4ea049f.50218",
            "arch": "amd64",
            "description": "Adaptive Routing Manager",
        },
        "installed_packages.11.name": "ibverbs-providers:amd64",
        "installed_packages.57.name": "ucx",
    },
}
COVERS = {MODINFO: EXPECTED_MODINFO, ETHTOOL: EXPECTED_ETHTOOL, OFED_S: EXPECTED_OFED_S, OFED: EXPECTED_OFED}
CASES = [
    (parser, d, n)
    for parser, d in (
        ("modinfo", MODINFO),
        ("ethtool-i", ETHTOOL),
        ("ofed_info", OFED_S),
        ("ofed_info", OFED),
    )
    for n in sorted(COVERS[d])
]


@pytest.mark.parametrize("parser,directory,name", CASES)
def test_real_output(parser, directory, name):
    check_fixture(parser, directory, name, COVERS[directory][name])


def test_counts_of_lists():
    modinfo = parse("modinfo", read(MODINFO, FULL_MODINFO))
    assert (len(modinfo["alias"]), len(modinfo["parm"])) == (23, 4)
    full = parse("ofed_info", read(OFED, sorted(EXPECTED_OFED)[0]))
    assert (len(full["components"]), len(full["installed_packages"])) == (64, 16)
    # multiperf and perftest really appear twice in the component list
    assert [c["name"] for c in full["components"]].count("perftest") == 2
    dpkg = parse("ofed_info", read(OFED, sorted(EXPECTED_OFED)[1]))
    assert len(dpkg["installed_packages"]) == 58


def test_signature_continuation_lines_are_joined():
    signature = parse("modinfo", read(MODINFO, FULL_MODINFO))["signature"]
    assert signature.startswith("91:E0:1B:FE") and signature.endswith("4A:AC:95:15")
    assert "EC:79:43:70" in signature  # end of line 1 + start of the first TAB line


def test_doca_style_ofed_info_s():
    record = parse("ofed_info", "OFED-internal-24.07-0.6.1:\n")
    assert (record["distro"], record["release"]) == ("OFED-internal", "24.07-0.6.1")


def test_modinfo_error_and_ethtool_without_bus_info():
    with pytest.raises(ParseError, match="modinfo failed"):
        parse("modinfo", "modinfo: ERROR: Module mlx5_core not found.\n")
    with pytest.raises(ParseError, match="bus-info"):
        parse("ethtool-i", "driver: mlx5_core\nversion: 5.1-2.3.7\n")
