"""dmidecode-memory and dmidecode-bios on every real capture."""

from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse

from .helpers import check_fixture, read

MEMORY = "dmidecode-t-memory"
SERVER = "Server-Micron-32GB-DDR4-RDIMM-3200-configured-2933-single-entry-tabs.txt"
EXPECTED_MEMORY = {
    "Desktop-dmidecode-3.3-t17-2xSODIMM-DDR4-with-header-tabs.txt": {
        "populated": 2,
        "empty_slots": 0,
        "total_mb": 16384,
        "sizes_mb": [8192],
        "smbios_version": "3.2.0",
        "devices.0.locator": "ChannelA-DIMM0",
        "devices.0.handle": "0x0025",
        "devices.1.manufacturer": "Crucial",
        "devices.0.part_number": "33333",
        "devices.0.speed_mts": 2933,
        "devices.0.type": "DDR4",
        "devices.0.form_factor": "SODIMM",
    },
    SERVER: {
        "populated": 1,
        "total_mb": 32768,
        "smbios_version": None,
        "devices.0.locator": "CPU1_DIMM_Q1",
        "devices.0.bank_locator": "P1 CHANNEL Q",
        "devices.0.speed_mts": 3200,
        "devices.0.configured_speed_mts": 2933,
        "devices.0.manufacturer": "Micron Technology",
        "devices.0.part_number": "36ASF4G72PZ-3G2E7",
        "devices.0.rank": 2,
        "devices.0.size_mb": 32768,
    },
}
BIOS = "dmidecode-t-bios"
EXPECTED_BIOS = {
    "Axiomtek-IMB760-Whitley-AMI-type0-with-dmidecode-3.5-preamble-tabs-expanded.txt": {
        "vendor": "American Megatrends International, LLC.",
        "version": "IMB760 V1.00",
        "release_date": "05/17/2022",
        "bios_revision": "5.21",
        "smbios_version": "3.3.0",
        "rom_size": "32 MB",
        "characteristics.0": "PCI is supported",
        "characteristics.21": "UEFI is supported",
        "elided": False,
    },
    "Dell-PowerEdge-R640-BIOS-2.22.2-fragment-with-ellipses.txt": {
        "vendor": "Dell Inc.",
        "version": "2.22.2",
        "release_date": "09/12/2024",
        "elided": True,
        "bios_revision": None,
        "system": {"manufacturer": "Dell Inc.", "product_name": "PowerEdge R640"},
    },
    "Dell-laptop-A09-type0-24bytes-SMBIOS2.x-tabs-full-characteristics.txt": {
        "vendor": "Dell Inc.",
        "version": "A09",
        "release_date": "04/03/2008",
        "bios_revision": "0.9",
        "firmware_revision": "0.9",
        "rom_size": "2048 kB",
        "characteristics.8": "3.5''/720 kB floppy services are supported (int 13h)",
    },
}
COVERS = {MEMORY: EXPECTED_MEMORY, BIOS: EXPECTED_BIOS}


@pytest.mark.parametrize("name", sorted(EXPECTED_MEMORY))
def test_memory_real_output(name):
    check_fixture("dmidecode-memory", MEMORY, name, EXPECTED_MEMORY[name])


@pytest.mark.parametrize("name", sorted(EXPECTED_BIOS))
def test_bios_real_output(name):
    check_fixture("dmidecode-bios", BIOS, name, EXPECTED_BIOS[name])


def test_characteristics_counts():
    axiomtek = parse("dmidecode-bios", read(BIOS, sorted(EXPECTED_BIOS)[0]))
    laptop = parse("dmidecode-bios", read(BIOS, sorted(EXPECTED_BIOS)[2]))
    assert (len(axiomtek["characteristics"]), len(laptop["characteristics"])) == (22, 21)


def test_empty_slot_counts_but_adds_no_memory():
    text = read(MEMORY, SERVER).replace("Size: 32 GB", "Size: No Module Installed")
    record = parse("dmidecode-memory", text)
    assert (record["populated"], record["empty_slots"], record["total_mb"]) == (0, 1, 0)
    assert record["devices"][0]["size_mb"] is None


def test_older_dmidecode_sizes_in_mb_and_clock_speed_key():
    text = (
        read(MEMORY, SERVER)
        .replace("Size: 32 GB", "Size: 16384 MB")
        .replace("Configured Memory Speed: 2933 MT/s", "Configured Clock Speed: 2666 MHz")
    )
    dev = parse("dmidecode-memory", text)["devices"][0]
    assert (dev["size_mb"], dev["configured_speed_mts"]) == (16384, 2666)


def test_memory_parser_refuses_bios_block_and_vice_versa():
    with pytest.raises(ParseError, match="Memory Device"):
        parse("dmidecode-memory", read(BIOS, sorted(EXPECTED_BIOS)[0]))
    with pytest.raises(ParseError, match="BIOS Information"):
        parse("dmidecode-bios", read(MEMORY, SERVER))
