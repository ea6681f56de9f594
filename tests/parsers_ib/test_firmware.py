from textwrap import indent

import pytest

from runbook.parsers import ParseError, parse

from ._fixtures import fixture_cases, parsed, text


def _cx5_huawei(r):
    assert (r["image_type"], r["fw_version"], r["psid"]) == ("FS4", "16.31.2006", "MT_0000000012")
    assert r["fw_version_running"] is None and r["fw_pending"] is False
    assert (r["base_guid"], r["guids_number"], r["base_mac"], r["macs_number"]) == (
        "0xec0d9a0300c152e4",
        8,
        "ec0d9ac152e4",
        8,
    )
    assert r["rom_info"] == [
        {"type": "UEFI", "version": "14.24.15", "cpu": "AMD64"},
        {"type": "PXE", "version": "3.6.404", "cpu": "AMD64"},
    ]
    assert r["secure_fw"] is False and r["security_attributes"] == "N/A"


def _cx6dx(r):
    assert (r["fw_version"], r["psid"], r["fw_release_date"]) == ("22.27.1016", "MT_0000000359", "27.2.2020")
    assert r["base_guid"] == "0xb8599f0300f08018" and r["guids_number"] == 4
    assert r["rom_info"][0]["cpu"] == "AMD64,AARCH64"


def _cx6lx_arm(r):
    assert (r["fw_version"], r["psid"], r["secure_fw"]) == ("26.33.1048", "MT_0000000575", True)
    assert r["rom_info"][1] == {"type": "PXE", "version": "3.6.502", "cpu": "AMD64"}


def _cx7(r):
    assert (r["fw_version"], r["product_version"], r["psid"]) == ("28.43.1014", "28.43.1014", "MT_0000001244")
    assert (r["guids_number"], r["macs_number"], r["base_mac"]) == (16, 16, "e09d73126744")
    assert r["secure_fw"] is True and r["image_vsd"] is None


def _cx3pro_fs2_pending(r):
    assert (r["image_type"], r["fw_version"], r["fw_version_running"]) == ("FS2", "2.42.5000", "2.40.5032")
    assert r["fw_pending"] is True and r["device_id"] == 4103 and r["psid"] == "MT_1090111019"
    assert r["guids"] == {
        "node": "0xffffffffffffffff",
        "port1": "0xffffffffffffffff",
        "port2": "0xffffffffffffffff",
        "sys_image": "0xffffffffffffffff",
    }
    assert r["macs"] == {"port1": "e41d2d1f28c0", "port2": "e41d2d1f28c1"}
    assert r["base_guid"] is None and r["vsd"] is None and r["secure_fw"] is None


def _bf3(r):
    (d,) = r["devices"]
    assert (d["device_type"], d["psid"], d["fw_current"], d["fw_available"]) == (
        "BlueField3",
        "MT_0000000884",
        "32.41.1000",
        None,
    )
    assert d["versions"]["UEFI Virtio blk"] == {"current": "22.4.0013", "available": None}
    assert d["versions"]["UEFI Virtio net"]["current"] == "21.4.0013"
    assert d["status"] == "No matching image found" and d["update_required"] is False
    assert d["part_number"] == "900-9D3B6-00CV-A_Ax" and d["base_mac"] == "a088c232137a"


def _dell_oem_no_status(r):
    (d,) = r["devices"]
    assert (d["device_type"], d["part_number"], d["description"]) == (None, None, None)
    assert (d["psid"], d["pci_device_name"], d["fw_current"]) == (
        "DEL2420110034",
        "0000:06:00.0",
        "14.23.1020",
    )
    assert d["port_guids"] == {"1": None, "2": None} and d["port_macs"] == {"1": None, "2": None}
    assert d["status"] is None and d["update_required"] is None


def _shasta_two(r):
    assert r["count"] == 2
    first, second = r["devices"]
    assert (first["device_type"], first["psid"], first["fw_current"]) == (
        "ConnectX5",
        "MT_0000000011",
        "16.26.4012",
    )
    assert (
        first["base_guid"] == "0xec0d9a03007da71e" and first["pci_device_name"] == "/dev/mst/mt4119_pciconf0"
    )
    assert second["part_number"] == "MCX416A-BCA_Ax" and second["versions"]["UEFI"]["current"] == "14.19.0017"
    assert second["status"] == "No matching image found"


def _spectrum(r):
    (d,) = r["devices"]
    assert (d["device_type"], d["psid"], d["fw_current"]) == ("Spectrum", "MT_2860112033", "13.1703.0000")
    assert d["base_mac"] == "00007cfe90fae7c0" and list(d["versions"]) == ["FW"]


def _mlxup_cx3(r):
    (d,) = r["devices"]
    assert d["port_guids"] == {"1": "0xe41d2d03007b4081"} and d["port_macs"] == {"2": "e41d2d7b4082"}
    assert (d["psid"], d["fw_current"], d["versions"]["PXE"]["current"]) == (
        "DEL1090001019",
        "2.42.5000",
        "3.4.0752",
    )


CASES = {
    ("flint", "CX5-mt4119-FS4-16.31.2006-MT_0000000012-Huawei-doc-8sp-indent-removed.txt"): _cx5_huawei,
    ("flint", "CX6Dx-FS4-22.27.1016-MT_0000000359-flint-d-BDF-q-MLNX_OFED-5.0.txt"): _cx6dx,
    (
        "flint",
        "CX6Lx-mt4127-HPE-RL300-Gen11-arm64-FS4-26.33.1048-MT_0000000575-secure-fw-query.txt",
    ): _cx6lx_arm,
    ("flint", "CX7-MCX715105AS-WEAT-FS4-28.43.1014-MT_0000001244-GuidsNumber-16-secure-fw-in-pod.txt"): _cx7,
    (
        "flint",
        "mstflint-CX3Pro-DeviceID-4103-FS2-crossflashed-PSID-MT_1090111019-FW-2.42.5000-Running-"
        "2.40.5032-before-reboot.txt",
    ): _cx3pro_fs2_pending,
    (
        "mlxfwmanager",
        "BlueField3-B3220-900-9D3B6-00CV-MT_0000000884-FW-32.41.1000-UEFI-Virtio-misaligned-"
        "Device-Type-indent-lost.txt",
    ): _bf3,
    (
        "mlxfwmanager",
        "Dell-OEM-PSID-DEL2420110034-Device-Type-NA-empty-Description-PCI-BDF-no-Status-line-"
        "FW-14.23.1020.txt",
    ): _dell_oem_no_status,
    (
        "mlxfwmanager",
        "Shasta-CSM-2-devices-CX5-MCX515A-MT_0000000011-CX4-MCX416A-MT_2130111027-FW-PXE-UEFI-"
        "No-matching-image.txt",
    ): _shasta_two,
    (
        "mlxfwmanager",
        "Spectrum-MSN2410-switch-MT_2860112033-FW-13.1703.0000-No-matching-image-found.txt",
    ): _spectrum,
    (
        "mlxfwmanager",
        "mlxup-Dell-CX3-01T7NW-PSID-DEL1090001019-FW-2.42.5000-Port1-GUID-Port2-MAC-No-matching-image.txt",
    ): _mlxup_cx3,
}


@fixture_cases(CASES)
def test_fixture(directory, name, check):
    check(parsed(directory, name))


def test_flint_indented_as_in_a_document():
    name = "CX7-MCX715105AS-WEAT-FS4-28.43.1014-MT_0000001244-GuidsNumber-16-secure-fw-in-pod.txt"
    plain = parse("flint", text("flint", name))
    assert parse("flint", indent(text("flint", name), "        ")) == plain
    assert parse("flint", text("flint", name).replace("\n", " \r\n")) == plain


def test_flint_newer_mft_part_number_and_description():
    out = (
        "Image type:            FS4\nFW Version:            28.39.1002\nFW Release Date:       5.10.2023\n"
        "Part Number:           MCX75310AAS-NEA_Ax\n"
        "Description:           NVIDIA ConnectX-7 HHHL Adapter Card; 400GbE / NDR IB (default mode); OSFP\n"
        "Product Version:       28.39.1002\nRom Info:              type=UEFI version=14.32.12 cpu=AMD64\n"
        "Description:           UID                GuidsNumber\n"
        "Base GUID:             a088c20300ba7c2a        4\nBase MAC:              a088c2ba7c2a            4\n"
        "Image VSD:             N/A\nDevice VSD:            N/A\nPSID:                  MT_0000000838\n"
        "Security Attributes:   secure-fw\n"
    )
    r = parse("flint", out)
    assert r["part_number"] == "MCX75310AAS-NEA_Ax" and r["product_description"].startswith(
        "NVIDIA ConnectX-7"
    )
    assert r["base_guid"] == "0xa088c20300ba7c2a" and r["psid"] == "MT_0000000838"


def test_tool_errors_are_parse_errors():
    with pytest.raises(ParseError, match="error"):
        parse(
            "flint",
            "-E- Cannot open Device: /dev/mst/mt4129_pciconf0. No such file or directory. MFE_CR_ERROR\n",
        )
    with pytest.raises(ParseError, match="error"):
        parse(
            "mlxfwmanager",
            "Querying Mellanox devices firmware ...\n-E- No devices found or specified, mst might be stopped.\n",
        )


def test_mlxfwmanager_update_required():
    out = (
        "Device #1:\n----------\n\n  Device Type:      ConnectX7\n  PSID:             MT_0000000838\n"
        "  Versions:         Current        Available\n     FW             28.37.1014     28.39.1002\n\n"
        "  Status:           Update required\n"
    )
    d = parse("mlxfwmanager", out)["devices"][0]
    assert (d["fw_current"], d["fw_available"], d["update_required"]) == ("28.37.1014", "28.39.1002", True)
