"""nvidia-smi-q on every real `nvidia-smi -q` capture (full, -d sections, -i, old drivers)."""
from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse

from .helpers import check_fixture, read

DIRECTORY = "nvidia-smi-q"
PARSER = "nvidia-smi-q"

EXPECTED = {
    "1xL40S-driver550.127.05-full-nvidia-smi-a-PCIe-Gen4-current-Gen1-idle-ECC-enabled.txt": {
        "driver_version": "550.127.05", "cuda_version": "12.4", "attached_gpus": 1, "gpu_count": 1,
        "timestamp": "Tue Nov 12 07:19:22 2024",
        "gpus.0.bus_id": "00000000:A1:00.0", "gpus.0.product_name": "NVIDIA L40S",
        "gpus.0.pcie.gen_max": 4, "gpus.0.pcie.gen_current": 1,
        "gpus.0.pcie.width_max": 16, "gpus.0.pcie.width_current": 16,
        "gpus.0.vbios_version": "95.02.66.00.02", "gpus.0.fb_memory_total_mib": 46068,
        "gpus.0.fields.ecc_mode.current": "Enabled",
        "gpus.0.fields.pci.device_id": "0x26B910DE",
        "gpus.0.fields.temperature.gpu_current_temp": "30 C",
        "gpus.0.fields.gpu_power_readings.power_draw": "33.44 W",
        # section header printed with a trailing space by the real tool
        "gpus.0.fields.gpu_memory_power_readings.power_draw": "N/A",
        "gpus.0.fields.clocks_event_reasons.hw_slowdown": "Not Active",
        "gpus.0.fields.processes": "None",
    },
    "2xKepler-GPU-driver470-q-d-CLOCK-old-alignment.txt": {
        "driver_version": "470.256.02", "cuda_version": "11.4", "attached_gpus": 2, "gpu_count": 2,
        "gpus.1.bus_id": "00000000:07:00.0", "gpus.0.fields.max_clocks.graphics": "875 MHz",
        "gpus.1.fields.max_clocks.memory": "3200 MHz", "gpus.0.product_name": None,
        "gpus.0.pcie.gen_current": None,
    },
    "4xGTX1080Ti-Windows-driver442.92-q-i0-head-NVSMI-LOG-header.txt": {
        "driver_version": "442.92", "cuda_version": "10.2", "attached_gpus": 4, "gpu_count": 1,
        "gpus.0.bus_id": "00000000:18:00.0", "gpus.0.product_name": "GeForce GTX 1080 Ti",
        "gpus.0.uuid": "GPU-95ef7c5d-fc11-835b-cd38-2020193cf8e0",
        "gpus.0.fields.driver_model.current": "WDDM",
        "gpus.0.fields.inforom_version.image_version": "G001.0000.01.04",
    },
    "A100-GCP-driver580-q-d-MEMORY-UTILIZATION-COMPUTE-head40-wide-alignment.txt": {
        "driver_version": "580.126.09", "cuda_version": "13.0", "gpu_count": 1,
        "gpus.0.bus_id": "00000000:00:04.0",
        "gpus.0.fb_memory_total_mib": 40960, "gpus.0.fb_memory_used_mib": 0,
        "gpus.0.fields.utilization.gpu": "0 %",
        "gpus.0.fields.bar1_memory_usage.total": "65536 MiB",
        "gpus.0.fields.gpu_utilization_samples.duration": "14.06 sec",
        "gpus.0.fields.memory_utilization_samples.number_of_samples": "71",
    },
    "QuadroM1000M-driver375.82-no-CUDA-Version-line-4digit-domain-busid-head.txt": {
        "driver_version": "375.82", "cuda_version": None, "attached_gpus": 1,
        "gpus.0.bus_id": "0000:01:00.0", "gpus.0.product_name": "Quadro M1000M",
        "gpus.0.vbios_version": "82.07.9D.00.1F",
        "gpus.0.fields.gpu_virtualization_mode.virtualization_mode": "None",
    },
}
COVERS = {DIRECTORY: EXPECTED}


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
