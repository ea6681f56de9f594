"""nvidia-smi-q on every real `nvidia-smi -q` capture (full, -d sections, -i, old drivers)."""

from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse

from .helpers import Fragment, check_fixture, read, read_lenient

DIRECTORY = "nvidia-smi-q"
PARSER = "nvidia-smi-q"

EXPECTED = {
    "1xL40S-driver550.127.05-full-nvidia-smi-a-PCIe-Gen4-current-Gen1-idle-ECC-enabled.txt": {
        "driver_version": "550.127.05",
        "cuda_version": "12.4",
        "attached_gpus": 1,
        "gpu_count": 1,
        "timestamp": "Tue Nov 12 07:19:22 2024",
        "gpus.0.bus_id": "00000000:A1:00.0",
        "gpus.0.product_name": "NVIDIA L40S",
        "gpus.0.pcie.gen_max": 4,
        "gpus.0.pcie.gen_current": 1,
        "gpus.0.pcie.width_max": 16,
        "gpus.0.pcie.width_current": 16,
        "gpus.0.vbios_version": "95.02.66.00.02",
        "gpus.0.fb_memory_total_mib": 46068,
        "gpus.0.fields.ecc_mode.current": "Enabled",
        "gpus.0.fields.pci.device_id": "0x26B910DE",
        "gpus.0.fields.temperature.gpu_current_temp": "30 C",
        "gpus.0.fields.gpu_power_readings.power_draw": "33.44 W",
        # section header printed with a trailing space by the real tool
        "gpus.0.fields.gpu_memory_power_readings.power_draw": "N/A",
        "gpus.0.fields.clocks_event_reasons.hw_slowdown": "Not Active",
        "gpus.0.fields.processes": "None",
        "gpus.0.persistence_mode": "Enabled",
        "gpus.0.performance_state": "P8",
        "gpus.0.pcie.gen_device_max": 4,
        "gpus.0.bar1_total_mib": 65536,
        "gpus.0.bar1_used_mib": 1,
        "gpus.0.ecc.mode_current": "Enabled",
        "gpus.0.ecc.aggregate.uncorrectable": 0,
        "gpus.0.ecc.volatile.dram_correctable": 0,
        "gpus.0.ecc.sram_threshold_exceeded": False,
        "gpus.0.retired_pages": {"single_bit": None, "double_bit": None, "pending": None},
        "gpus.0.remapped_rows.pending": False,
        "gpus.0.remapped_rows.failure": False,
        "gpus.0.remapped_rows.histogram.max": 192,
        "gpus.0.clocks_reasons_section": "Clocks Event Reasons",
        "gpus.0.clocks_reasons_active": ["idle"],
        "gpus.0.clocks_reasons.hw_thermal_slowdown": False,
        "gpus.0.power": {
            "draw_w": 33.44,
            "limit_w": 350.0,
            "requested_limit_w": 350.0,
            "default_limit_w": 350.0,
            "min_limit_w": 100.0,
            "max_limit_w": 350.0,
        },
    },
    "2xKepler-GPU-driver470-q-d-CLOCK-old-alignment.txt": {
        "driver_version": "470.256.02",
        "cuda_version": "11.4",
        "attached_gpus": 2,
        "gpu_count": 2,
        "gpus.1.bus_id": "00000000:07:00.0",
        "gpus.0.fields.max_clocks.graphics": "875 MHz",
        "gpus.1.fields.max_clocks.memory": "3200 MHz",
        "gpus.0.product_name": None,
        "gpus.0.pcie.gen_current": None,
    },
    "4xGTX1080Ti-Windows-driver442.92-q-i0-head-NVSMI-LOG-header.txt": {
        "driver_version": "442.92",
        "cuda_version": "10.2",
        "attached_gpus": 4,
        "gpu_count": 1,
        "gpus.0.bus_id": "00000000:18:00.0",
        "gpus.0.product_name": "GeForce GTX 1080 Ti",
        "gpus.0.uuid": "GPU-95ef7c5d-fc11-835b-cd38-2020193cf8e0",
        "gpus.0.fields.driver_model.current": "WDDM",
        "gpus.0.fields.inforom_version.image_version": "G001.0000.01.04",
    },
    "A100-GCP-driver580-q-d-MEMORY-UTILIZATION-COMPUTE-head40-wide-alignment.txt": {
        "driver_version": "580.126.09",
        "cuda_version": "13.0",
        "gpu_count": 1,
        "gpus.0.bus_id": "00000000:00:04.0",
        "gpus.0.fb_memory_total_mib": 40960,
        "gpus.0.fb_memory_used_mib": 0,
        "gpus.0.fields.utilization.gpu": "0 %",
        "gpus.0.fields.bar1_memory_usage.total": "65536 MiB",
        "gpus.0.fields.gpu_utilization_samples.duration": "14.06 sec",
        "gpus.0.fields.memory_utilization_samples.number_of_samples": "71",
    },
    "QuadroM1000M-driver375.82-no-CUDA-Version-line-4digit-domain-busid-head.txt": {
        "driver_version": "375.82",
        "cuda_version": None,
        "attached_gpus": 1,
        "gpus.0.bus_id": "0000:01:00.0",
        "gpus.0.product_name": "Quadro M1000M",
        "gpus.0.vbios_version": "82.07.9D.00.1F",
        "gpus.0.fields.gpu_virtualization_mode.virtualization_mode": "None",
    },
}
ECC = "nvidia-smi-q-ecc"
EXPECTED_ECC = {
    "1xGPU-driver495.44-q-d-PERFORMANCE-Clocks-Throttle-Reasons-old-name-Idle-Active.txt": {
        "driver_version": "495.44",
        "gpu_count": 1,
        "gpus.0.bus_id": "00000000:0E:00.0",
        "gpus.0.performance_state": "P0",
        "gpus.0.clocks_reasons_section": "Clocks Throttle Reasons",
        "gpus.0.clocks_reasons_active": ["idle"],
        "gpus.0.clocks_reasons.sw_power_cap": False,
        "gpus.0.clocks_reasons.hw_power_brake_slowdown": False,
        "gpus.0.clocks_reasons.display_clock_setting": False,
        "gpus.0.ecc": None,
        "gpus.0.power": None,
    },
    "2018-driver-q-grep-A8-Clocks-Throttle-Reasons-PERFORMANCE-block-narrow-28col-alignment.txt": Fragment(
        {
            "gpu_count": 1,
            "driver_version": None,
            "gpus.0.bus_id": None,
            "gpus.0.clocks_reasons_section": "Clocks Throttle Reasons",
            "gpus.0.clocks_reasons_active": ["idle"],
            "gpus.0.clocks_reasons.sync_boost": False,
            "gpus.0.clocks_reasons.hw_thermal_slowdown": False,
        },
        missing=("banner", "Driver Version", "'GPU 00000000:XX:00.0' line"),
    ),
    "8xA100-SXM4-40GB-driver535.161.08-q-d-ECC-GPU0B-aggregate-DRAM-correctable-87.txt": {
        "driver_version": "535.161.08",
        "attached_gpus": 8,
        "gpu_count": 8,
        "gpus.1.bus_id": "00000000:0B:00.0",
        "gpus.1.ecc.aggregate.dram_correctable": 87,
        "gpus.1.ecc.aggregate.correctable": 87,
        "gpus.1.ecc.volatile.correctable": 0,
        "gpus.1.ecc.aggregate.sram_uncorrectable": 0,
        "gpus.0.ecc.aggregate.dram_correctable": 0,
        "gpus.0.ecc.mode_pending": "Enabled",
        "gpus.1.ecc.sram_threshold_exceeded": False,
        "gpus.7.ecc.aggregate.uncorrectable": 0,
        "gpus.1.remapped_rows": None,
    },
    "A100-SXM4-80GB-driver510.73.08-q-excerpt-ECC-DRAM-correctable-177-RemappedRows-Pending-Yes-639-banks-author-elided.txt": Fragment(
        {
            "driver_version": "510.73.08",
            "attached_gpus": 8,
            "gpu_count": 1,
            "gpus.0.bus_id": "00000000:10:1C.0",
            "gpus.0.product_name": "NVIDIA A100-SXM4-80GB",
            "gpus.0.ecc.volatile.dram_correctable": 177,
            "gpus.0.ecc.aggregate.dram_correctable": 177,
            "gpus.0.ecc.aggregate.sram_uncorrectable": 0,
            "gpus.0.ecc.aggregate.uncorrectable": 0,
            "gpus.0.retired_pages": {"single_bit": None, "double_bit": None, "pending": None},
            "gpus.0.remapped_rows": {
                "correctable": 1,
                "uncorrectable": 0,
                "pending": True,
                "failure": False,
                "histogram": {"max": 639, "high": 1, "partial": 0, "low": 0, "none": 0},
            },
        },
        missing=("banner", "elided"),
    ),
}
COVERS = {DIRECTORY: EXPECTED, ECC: EXPECTED_ECC}


@pytest.mark.parametrize("name", sorted(EXPECTED_ECC))
def test_real_ecc_and_performance_output(name):
    check_fixture(PARSER, ECC, name, EXPECTED_ECC[name])


# Pre-r510 ECC layout (Single Bit / Double Bit with per-memory counts and a Total) and
# the old "Power Readings" section, as printed by r418-r470 drivers on V100/P100 cards.
OLD_ECC = """\
==============NVSMI LOG==============

Timestamp                                 : Mon Mar  1 10:00:00 2021
Driver Version                            : 460.32.03
CUDA Version                              : 11.2

Attached GPUs                             : 1
GPU 00000000:3B:00.0
    Product Name                          : Tesla V100-PCIE-32GB
    Persistence Mode                      : Disabled
    ECC Errors
        Volatile
            Single Bit
                Device Memory             : 2
                Register File             : 0
                L1 Cache                  : 0
                L2 Cache                  : 0
                Texture Memory            : N/A
                Texture Shared            : N/A
                CBU                       : N/A
                Total                     : 2
            Double Bit
                Device Memory             : 0
                Register File             : 0
                L1 Cache                  : 0
                L2 Cache                  : 0
                Texture Memory            : N/A
                Texture Shared            : N/A
                CBU                       : 0
                Total                     : 0
    Retired Pages
        Single Bit ECC                    : 1
        Double Bit ECC                    : 0
        Pending Page Blacklist            : Yes
    Power Readings
        Power Management                  : Supported
        Power Draw                        : 37.27 W
        Power Limit                       : 250.00 W
        Default Power Limit               : 250.00 W
        Enforced Power Limit              : 250.00 W
        Min Power Limit                   : 100.00 W
        Max Power Limit                   : 250.00 W
"""


def test_old_single_double_bit_ecc_retired_pages_and_power_readings():
    gpu = parse(PARSER, OLD_ECC)["gpus"][0]
    assert gpu["persistence_mode"] == "Disabled"
    assert gpu["ecc"]["volatile"]["correctable"] == 2 and gpu["ecc"]["volatile"]["uncorrectable"] == 0
    assert gpu["ecc"]["aggregate"] is None
    assert gpu["retired_pages"] == {"single_bit": 1, "double_bit": 0, "pending": True}
    assert gpu["power"]["draw_w"] == 37.27 and gpu["power"]["limit_w"] == 250.0
    assert gpu["power"]["min_limit_w"] == 100.0


def test_excerpt_without_banner_is_refused_strictly():
    with pytest.raises(ParseError, match="banner"):
        parse(PARSER, "    Remapped Rows\n        Pending                           : Yes\n")
    reading = read_lenient(PARSER, "    Remapped Rows\n        Pending                           : Yes\n")
    assert reading.record["gpus"][0]["remapped_rows"]["pending"] is True


def test_indented_garbage_is_refused_even_leniently():
    with pytest.raises(ParseError, match="expected"):
        read_lenient(PARSER, "    color : blue\n    size : 3\n")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_output(name):
    check_fixture(PARSER, DIRECTORY, name, EXPECTED[name])


def test_two_gpu_sections_are_kept_apart():
    record = parse(PARSER, read(DIRECTORY, "2xKepler-GPU-driver470-q-d-CLOCK-old-alignment.txt"))
    assert [g["bus_id"] for g in record["gpus"]] == ["00000000:06:00.0", "00000000:07:00.0"]
    assert all(list(g["fields"]) == ["max_clocks"] for g in record["gpus"])


def test_banner_without_driver_version_is_refused():
    with pytest.raises(ParseError, match="Driver Version"):
        parse(PARSER, "==============NVSMI LOG==============\n\nTimestamp : now\n")


# Driver 610 header of `nvidia-smi -q` (as captured on a 610.57.04 host and published with
# its deprecation notices): the old names carry "[Deprecated; ...]", the new ones the values.
DRIVER_610_Q = """\
==============NVSMI LOG==============

Timestamp                                              : Sun Sep  6 08:21:38 2026
Driver Version                                         : 610.57.04 [Deprecated; will be removed in CUDA 14.0. Use KMD Version instead]
CUDA Version                                           : 13.3 [Deprecated; will be removed in CUDA 14.0. Use CUDA UMD Version instead]
KMD Version                                            : 610.57.04
CUDA UMD Version                                       : 13.3

Attached GPUs                                          : 1
GPU 00000000:01:00.0
    Temperature
        GPU Current Temp                               : 79 C
"""


def test_driver_610_kmd_and_cuda_umd_version():
    record = parse(PARSER, DRIVER_610_Q)
    assert (record["driver_version"], record["cuda_version"]) == ("610.57.04", "13.3")
    only_new = "\n".join(ln for ln in DRIVER_610_Q.splitlines() if "Deprecated" not in ln) + "\n"
    assert parse(PARSER, only_new)["driver_version"] == "610.57.04"
