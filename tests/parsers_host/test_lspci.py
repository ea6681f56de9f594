"""lspci and lspci-vv on every real capture, plus old-lspci and access-denied variants."""
from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse

from .helpers import check_fixture, read

VV = "lspci-vv"
EXPECTED_VV = {
    "ConnectX-7-MCX755106AS-HEAT-LnkSta32GTx16.txt": {
        "count": 1, "devices.0.slot": "21:00.0", "devices.0.class": "Ethernet controller",
        "devices.0.model": "ConnectX-7",
        "devices.0.lnkcap.speed": "32GT/s", "devices.0.lnkcap.width": "x16",
        "devices.0.lnksta.speed": "32GT/s", "devices.0.lnksta.lanes": 16,
        "devices.0.lnksta.downgraded": False, "devices.0.numa_node": 0,
        "devices.0.kernel_driver": "mlx5_core", "devices.0.part_number": "MCX755106AS-HEAT",
        "devices.0.serial_number": "MT24216006W0", "devices.0.supported_speeds": "2.5-32GT/s",
    },
    "HighPoint-SSD7540-LnkCap5GTx2-LnkSta-Width-x1-downgraded.txt": {
        "devices.0.slot": "71:00.0", "devices.0.class": "RAID bus controller", "devices.0.rev": "01",
        "devices.0.lnkcap.speed": "5GT/s", "devices.0.lnkcap.width": "x2",
        "devices.0.lnksta.width": "x1", "devices.0.lnksta.width_downgraded": True,
        "devices.0.lnksta.speed_downgraded": False, "devices.0.lnksta.downgraded": True,
        "devices.0.numa_node": 0, "devices.0.supported_speeds": None, "devices.0.kernel_driver": None,
    },
    "RTX6000Ada-GPU-LnkCap16GTx16-LnkSta2.5GT-downgraded-idle.txt": {
        "devices.0.slot": "01:00.0", "devices.0.class": "VGA compatible controller",
        "devices.0.physical_slot": "3", "devices.0.model": "RTX 6000 Ada Generation",
        "devices.0.rev": "a1",
        "devices.0.lnkcap.speed": "16GT/s", "devices.0.lnkcap.width": "x16",
        "devices.0.lnksta.speed": "2.5GT/s", "devices.0.lnksta.speed_gts": 2.5,
        "devices.0.lnksta.speed_downgraded": True, "devices.0.lnksta.width": "x16",
        "devices.0.lnksta.downgraded": True, "devices.0.kernel_driver": "nvidia",
        "devices.0.kernel_modules": ["nvidiafb", "nouveau", "nvidia_drm", "nvidia"],
    },
}

MELLANOX = "lspci-grep-mellanox"
EXPECTED_MELLANOX = {
    "2xCX7-MCX755106AS-domains-0000-0001-grep-MT2910.txt": {
        "count": 4, "by_class": {"Ethernet controller": 4}, "elided": False,
        "devices.2.slot": "0001:05:00.0", "devices.0.model": "ConnectX-7",
        "devices.0.description": "Mellanox Technologies MT2910 Family [ConnectX-7]",
    },
    "2xCX7-dualport-ETH-mode-4-functions-grep-ConnectX.txt": {
        "count": 4, "devices.0.slot": "31:00.0", "devices.2.slot": "b1:00.0",
        "devices.3.slot": "b1:00.1", "devices.3.class": "Ethernet controller",
    },
    "CX5-lspci-nn-Infiniband-controller-0207-15b3-1017-with-elision.txt": {
        "count": 2, "elided": True, "devices.0.class": "Infiniband controller",
        "devices.0.class_id": "0207", "devices.0.vendor_id": "15b3", "devices.1.device_id": "1017",
        "devices.1.slot": "86:00.1", "devices.0.model": "ConnectX-5",
    },
}
NVIDIA = "lspci-grep-nvidia"
EXPECTED_NVIDIA = {
    "AWS-g6e-8xL40S-AD102GL-3D-controller-plus-4xEFA.txt": {
        "count": 12, "by_class": {"Ethernet controller": 4, "3D controller": 8},
        "devices.2.slot": "9e:00.0", "devices.2.model": "L40S", "devices.2.rev": "a1",
        "devices.11.slot": "cc:00.0",
        "devices.0.description": "Amazon.com, Inc. Elastic Fabric Adapter (EFA)",
    },
}
COVERS = {VV: EXPECTED_VV, MELLANOX: EXPECTED_MELLANOX, NVIDIA: EXPECTED_NVIDIA}


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
    denied = "3b:00.0 Infiniband controller: Mellanox Technologies MT2910 Family [ConnectX-7]\n" \
             "\tSubsystem: Mellanox Technologies Device 0026\n\tCapabilities: <access denied>\n"
    text = read(VV, "ConnectX-7-MCX755106AS-HEAT-LnkSta32GTx16.txt") + denied
    record = parse("lspci-vv", text)
    assert record["count"] == 2
    assert record["devices"][1]["capabilities_access_denied"] is True
    assert record["devices"][1]["lnksta"] is None
    assert record["devices"][0]["lnksta"]["speed"] == "32GT/s"
