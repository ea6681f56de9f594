"""lspci and lspci-vv on every real capture, plus old-lspci and access-denied variants."""

from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse

from .helpers import Fragment, check_fixture, read, read_lenient

VV = "lspci-vv"
EXPECTED_VV = {
    "ConnectX-7-MCX755106AS-HEAT-LnkSta32GTx16.txt": {
        "count": 1,
        "devices.0.slot": "21:00.0",
        "devices.0.class": "Ethernet controller",
        "devices.0.model": "ConnectX-7",
        "devices.0.lnkcap.speed": "32GT/s",
        "devices.0.lnkcap.width": "x16",
        "devices.0.lnksta.speed": "32GT/s",
        "devices.0.lnksta.lanes": 16,
        "devices.0.lnksta.downgraded": False,
        "devices.0.numa_node": 0,
        "devices.0.kernel_driver": "mlx5_core",
        "devices.0.part_number": "MCX755106AS-HEAT",
        "devices.0.serial_number": "MT24216006W0",
        "devices.0.supported_speeds": "2.5-32GT/s",
    },
    "HighPoint-SSD7540-LnkCap5GTx2-LnkSta-Width-x1-downgraded.txt": {
        "devices.0.slot": "71:00.0",
        "devices.0.class": "RAID bus controller",
        "devices.0.rev": "01",
        "devices.0.lnkcap.speed": "5GT/s",
        "devices.0.lnkcap.width": "x2",
        "devices.0.lnksta.width": "x1",
        "devices.0.lnksta.width_downgraded": True,
        "devices.0.lnksta.speed_downgraded": False,
        "devices.0.lnksta.downgraded": True,
        "devices.0.numa_node": 0,
        "devices.0.supported_speeds": None,
        "devices.0.kernel_driver": None,
    },
    "RTX6000Ada-GPU-LnkCap16GTx16-LnkSta2.5GT-downgraded-idle.txt": {
        "devices.0.slot": "01:00.0",
        "devices.0.class": "VGA compatible controller",
        "devices.0.physical_slot": "3",
        "devices.0.model": "RTX 6000 Ada Generation",
        "devices.0.rev": "a1",
        "devices.0.lnkcap.speed": "16GT/s",
        "devices.0.lnkcap.width": "x16",
        "devices.0.lnksta.speed": "2.5GT/s",
        "devices.0.lnksta.speed_gts": 2.5,
        "devices.0.lnksta.speed_downgraded": True,
        "devices.0.lnksta.width": "x16",
        "devices.0.lnksta.downgraded": True,
        "devices.0.kernel_driver": "nvidia",
        "devices.0.kernel_modules": ["nvidiafb", "nouveau", "nvidia_drm", "nvidia"],
        "devices.0.regions.1.size": "64G",
        "devices.0.regions.1.size_bytes": 64 << 30,
        "devices.0.regions.1.prefetchable": True,
        "devices.0.regions.1.bits": 64,
        "devices.0.regions.0.size": "16M",
        "devices.0.regions.0.prefetchable": False,
        "devices.0.acsctl": None,
        "devices.0.acs_redirect": None,
    },
}
ACS = "lspci-acs"
_ACS_OFF = {
    "SrcValid": False,
    "TransBlk": False,
    "ReqRedir": False,
    "CmpltRedir": False,
    "UpstreamFwd": False,
    "EgressCtrl": False,
    "DirectTrans": False,
}
EXPECTED_ACS = {
    "gpud-testdata-HGX-H100-Broadcom-PEX890xx-Gen5-switch-upstream-plus-5-downstream-ports-ACSCtl-all-minus-6-blocks.txt": {
        "count": 6,
        "devices.0.slot": "16:00.0",
        "devices.0.acscap": None,
        "devices.0.acs_enabled": None,
        "devices.1.slot": "17:00.0",
        "devices.1.acsctl": _ACS_OFF,
        "devices.1.acs_enabled": [],
        "devices.1.acs_redirect": False,
        "devices.1.acscap.DirectTrans": True,
        "devices.1.acscap.EgressCtrl": False,
        "devices.5.slot": "17:1f.0",
        "devices.5.acs_redirect": False,
        # pciutils 3.6+ "(ok)" / "(downgraded)" markers after LnkSta speed and width
        "devices.0.lnksta.speed": "32GT/s",
        "devices.0.lnksta.downgraded": False,
        "devices.1.lnksta.speed": "16GT/s",
        "devices.1.lnksta.speed_downgraded": True,
        "devices.1.lnksta.width": "x4",
        "devices.1.lnksta.width_downgraded": False,
        "devices.4.lnksta.downgraded": True,
        "devices.2.lnksta.downgraded": False,
        "devices.0.numa_node": 0,
    },
    "nccl-523-lspci-vvv-grep-acsctl-only-mixed-enabled-disabled-16sp-indent-fragment.txt": Fragment(
        {
            "count": 12,
            "devices.0.slot": None,
            "devices.0.acs_enabled": ["SrcValid", "ReqRedir", "CmpltRedir", "UpstreamFwd"],
            "devices.0.acs_redirect": True,
            "devices.1.acs_enabled": ["SrcValid"],
            "devices.1.acs_redirect": False,
            "devices.3.acsctl": _ACS_OFF,
            "devices.8.acs_enabled": ["ReqRedir", "CmpltRedir"],
            "devices.11.acs_redirect": True,
        },
        missing=("the device line",),
    ),
}

MELLANOX = "lspci-grep-mellanox"
EXPECTED_MELLANOX = {
    "2xCX7-MCX755106AS-domains-0000-0001-grep-MT2910.txt": {
        "count": 4,
        "by_class": {"Ethernet controller": 4},
        "elided": False,
        "devices.2.slot": "0001:05:00.0",
        "devices.0.model": "ConnectX-7",
        "devices.0.description": "Mellanox Technologies MT2910 Family [ConnectX-7]",
    },
    "2xCX7-dualport-ETH-mode-4-functions-grep-ConnectX.txt": {
        "count": 4,
        "devices.0.slot": "31:00.0",
        "devices.2.slot": "b1:00.0",
        "devices.3.slot": "b1:00.1",
        "devices.3.class": "Ethernet controller",
    },
    "CX5-lspci-nn-Infiniband-controller-0207-15b3-1017-with-elision.txt": {
        "count": 2,
        "elided": True,
        "devices.0.class": "Infiniband controller",
        "devices.0.class_id": "0207",
        "devices.0.vendor_id": "15b3",
        "devices.1.device_id": "1017",
        "devices.1.slot": "86:00.1",
        "devices.0.model": "ConnectX-5",
    },
}
NVIDIA = "lspci-grep-nvidia"
EXPECTED_NVIDIA = {
    "AWS-g6e-8xL40S-AD102GL-3D-controller-plus-4xEFA.txt": {
        "count": 12,
        "by_class": {"Ethernet controller": 4, "3D controller": 8},
        "devices.2.slot": "9e:00.0",
        "devices.2.model": "L40S",
        "devices.2.rev": "a1",
        "devices.11.slot": "cc:00.0",
        "devices.0.description": "Amazon.com, Inc. Elastic Fabric Adapter (EFA)",
    },
}
COVERS = {VV: EXPECTED_VV, ACS: EXPECTED_ACS, MELLANOX: EXPECTED_MELLANOX, NVIDIA: EXPECTED_NVIDIA}


@pytest.mark.parametrize("name", sorted(EXPECTED_VV))
def test_lspci_vv_real_output(name):
    check_fixture("lspci-vv", VV, name, EXPECTED_VV[name])


@pytest.mark.parametrize("directory,name", [(d, n) for d in (MELLANOX, NVIDIA) for n in sorted(COVERS[d])])
def test_lspci_real_output(directory, name):
    check_fixture("lspci", directory, name, COVERS[directory][name])


def test_l40s_count_by_model():
    record = parse("lspci", read(NVIDIA, "AWS-g6e-8xL40S-AD102GL-3D-controller-plus-4xEFA.txt"))
    assert sum(d["model"] == "L40S" for d in record["devices"]) == 8


def test_grep_that_matched_nothing_is_zero_devices():
    assert parse("lspci", "")["count"] == 0


def test_plain_lspci_refuses_vv_blocks():
    with pytest.raises(ParseError, match="lspci-vv"):
        parse("lspci", read(VV, "ConnectX-7-MCX755106AS-HEAT-LnkSta32GTx16.txt"))


def test_lspci_vv_refuses_plain_listing():
    with pytest.raises(ParseError, match="without any -vv details"):
        parse("lspci-vv", read(NVIDIA, "AWS-g6e-8xL40S-AD102GL-3D-controller-plus-4xEFA.txt"))


def test_old_lspci_without_marker_still_reports_downgrade():
    text = read(VV, "HighPoint-SSD7540-LnkCap5GTx2-LnkSta-Width-x1-downgraded.txt")
    sta = parse("lspci-vv", text.replace(" (downgraded)", ""))["devices"][0]["lnksta"]
    assert sta["width_downgraded"] is False and sta["downgraded"] is True


def test_several_devices_and_access_denied():
    denied = (
        "3b:00.0 Infiniband controller: Mellanox Technologies MT2910 Family [ConnectX-7]\n"
        "\tSubsystem: Mellanox Technologies Device 0026\n\tCapabilities: <access denied>\n"
    )
    text = read(VV, "ConnectX-7-MCX755106AS-HEAT-LnkSta32GTx16.txt") + denied
    record = parse("lspci-vv", text)
    assert record["count"] == 2
    assert record["devices"][1]["capabilities_access_denied"] is True
    assert record["devices"][1]["lnksta"] is None
    assert record["devices"][0]["lnksta"]["speed"] == "32GT/s"


@pytest.mark.parametrize("name", sorted(EXPECTED_ACS))
def test_lspci_acs_real_output(name):
    check_fixture(VV, ACS, name, EXPECTED_ACS[name])


def test_fragment_starting_at_the_lnkcap_lines():
    lines = read(VV, "RTX6000Ada-GPU-LnkCap16GTx16-LnkSta2.5GT-downgraded-idle.txt").splitlines()
    start = next(i for i, line in enumerate(lines) if "LnkCap:" in line)
    fragment = "\n".join(lines[start : start + 6]) + "\n"
    with pytest.raises(ParseError, match="device line"):
        parse(VV, fragment)
    reading = read_lenient(VV, fragment)
    dev = reading.record["devices"][0]
    assert reading.record["count"] == 1 and dev["slot"] is None
    assert dev["lnkcap"]["speed"] == "16GT/s" and dev["lnksta"]["speed"] == "2.5GT/s"
    assert dev["lnksta"]["downgraded"] is True
    assert reading.missing == ["the device line ('21:00.0 Ethernet controller: ...') before indented details"]


def test_elided_lines_in_a_block():
    lines = read(VV, "ConnectX-7-MCX755106AS-HEAT-LnkSta32GTx16.txt").splitlines()
    fragment = "\n".join(lines[:3] + ["        ..."] + lines[-12:]) + "\n"
    with pytest.raises(ParseError, match="elided"):
        parse(VV, fragment)
    assert read_lenient(VV, fragment).record["devices"][0]["slot"] == "21:00.0"


def test_indented_garbage_is_refused_even_leniently():
    with pytest.raises(ParseError, match="expected"):
        read_lenient(VV, "    hello: world\n    foo bar\n")


def test_sriov_vf_bars_are_not_the_devices_own():
    record = parse(VV, read(VV, "ConnectX-7-MCX755106AS-HEAT-LnkSta32GTx16.txt"))
    assert [(r["region"], r["size"], r["address"]) for r in record["devices"][0]["regions"]] == [
        (0, "32M", "500aa000000")
    ]
