"""nvidia-smi (default table) on every real capture, plus failure outputs."""

from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse

from .helpers import check_fixture, read, read_lenient

DIRECTORY = "nvidia-smi"
PARSER = "nvidia-smi"

EXPECTED = {
    "10xA40-PCIe-driver550.127.05-multi-GPU-table-No-running-processes-timestamp-omitted.txt": {
        "driver_version": "550.127.05",
        "cuda_version": "12.4",
        "gpu_count": 10,
        "gpus.0.name": "NVIDIA A40",
        "gpus.5.bus_id": "00000000:CE:00.0",
        "gpus.0.fan_pct": 0,
        "gpus.2.power_w": 15,
        "gpus.2.power_cap_w": 300,
        "gpus.9.memory_total_mib": 46068,
        "gpus.9.index": 9,
        "gpus.0.mig_mode": "N/A",
        "processes": [],
        "processes_listed": True,
    },
    "1xA100-SXM4-GCP-driver580-cuda13.0-trailing-spaces-date.txt": {
        "driver_version": "580.126.09",
        "cuda_version": "13.0",
        "gpu_count": 1,
        "gpus.0.name": "NVIDIA A100-SXM4-40GB",
        "gpus.0.bus_id": "00000000:00:04.0",
        "gpus.0.persistence_mode": "Off",
        "gpus.0.power_w": 45,
        "gpus.0.power_cap_w": 400,
        "gpus.0.memory_total_mib": 40960,
        "gpus.0.mig_mode": "Disabled",
        "gpus.0.fan_pct": None,
        "gpus.0.temp_c": 29,
        "gpus.0.perf": "P0",
    },
    "1xL40S-driver550.127.05-cuda12.4-No-running-processes-found-timestamp-omitted.txt": {
        "driver_version": "550.127.05",
        "cuda_version": "12.4",
        "gpu_count": 1,
        "gpus.0.name": "NVIDIA L40S",
        "gpus.0.bus_id": "00000000:A1:00.0",
        "gpus.0.temp_c": 31,
        "gpus.0.power_w": 33,
        "gpus.0.power_cap_w": 350,
        "gpus.0.memory_used_mib": 1,
        "gpus.0.memory_total_mib": 46068,
        "gpus.0.perf": "P8",
        "gpus.0.ecc_uncorrected": "0",
        "processes": [],
    },
    "1xRTXA6000-driver535-cuda12.2-no-timestamp-with-processes.txt": {
        "driver_version": "535.171.04",
        "cuda_version": "12.2",
        "gpus.0.bus_id": "00000000:AC:00.0",
        "gpus.0.ecc_uncorrected": "Off",
        "gpus.0.fan_pct": 30,
        "gpus.0.memory_used_mib": 308,
        "gpus.0.memory_total_mib": 49140,
        "processes.1.name": "/usr/bin/gnome-shell",
        "processes.1.pid": 2143,
        "processes.0.memory_mib": 180,
        "processes.0.type": "G",
        "processes.0.gpu": 0,
    },
    "4xRTX6000Ada-driver575-cuda12.9-default-table.txt": {
        "driver_version": "575.51.03",
        "cuda_version": "12.9",
        "gpu_count": 4,
        "gpus.0.name": "NVIDIA RTX 6000 Ada Gene...",
        "gpus.0.name_truncated": True,
        "gpus.3.bus_id": "00000000:E1:00.0",
        "gpus.1.temp_c": 34,
        "gpus.1.power_w": 11,
        "gpus.2.memory_used_mib": 2,
    },
    "8xL40S-driver565-cuda12.7-with-processes.txt": {
        "driver_version": "565.57.01",
        "cuda_version": "12.7",
        "gpu_count": 8,
        "gpus.4.bus_id": "00000000:D1:00.0",
        "gpus.1.power_w": 170,
        "gpus.1.gpu_util_pct": 96,
        "gpus.0.memory_used_mib": 45397,
        "gpus.7.name": "NVIDIA L40S",
        "gpus.7.name_truncated": False,
        "processes.7.name": "VLLM::Worker_TP7_EP7",
        "processes.7.gpu": 7,
        "processes.7.memory_mib": 45232,
        "processes.3.pid": 2081,
        "processes.3.type": "C",
    },
}
COVERS = {DIRECTORY: EXPECTED}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_output(name):
    check_fixture(PARSER, DIRECTORY, name, EXPECTED[name])


def test_eight_l40s_processes_one_per_gpu():
    record = parse(PARSER, read(DIRECTORY, "8xL40S-driver565-cuda12.7-with-processes.txt"))
    assert [p["gpu"] for p in record["processes"]] == list(range(8))


def test_driver_not_loaded_is_a_parse_error_with_the_message():
    text = (
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
        "Make sure that the latest NVIDIA driver is installed and running.\n"
    )
    with pytest.raises(ParseError, match="could not talk to the driver"):
        parse(PARSER, text)


def test_header_without_gpu_rows_is_refused():
    head = "\n".join(read(DIRECTORY, "4xRTX6000Ada-driver575-cuda12.9-default-table.txt").splitlines()[:5])
    with pytest.raises(ParseError, match="GPU rows"):
        parse(PARSER, head)


# Driver 418 layout (79 columns, no MIG line, processes without GI/CI, power N/A),
# as posted in pop-os/system76-power issue #76 (2019-05-10); the excerpt is cut after
# the second process row, so the table ends there.
DRIVER_418 = """\
Fri May 10 14:25:45 2019
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 418.56       Driver Version: 418.56       CUDA Version: 10.1     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  GeForce GTX 105...  Off  | 00000000:01:00.0 Off |                  N/A |
| N/A   56C    P0    N/A /  N/A |    327MiB /  4040MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+

+-----------------------------------------------------------------------------+
| Processes:                                                       GPU Memory |
|  GPU       PID   Type   Process name                             Usage      |
|=============================================================================|
|    0      1906      G   /usr/lib/xorg/Xorg                           144MiB |
|    0      2016      G   /usr/bin/gnome-shell                          94MiB |
"""


def test_driver_418_layout():
    record = parse(PARSER, DRIVER_418)
    gpu = record["gpus"][0]
    assert (record["driver_version"], record["cuda_version"]) == ("418.56", "10.1")
    assert (gpu["name"], gpu["name_truncated"], gpu["persistence_mode"]) == (
        "GeForce GTX 105...",
        True,
        "Off",
    )
    assert (gpu["power_w"], gpu["power_cap_w"], gpu["mig_mode"]) == (None, None, None)
    assert (gpu["memory_used_mib"], gpu["memory_total_mib"], gpu["temp_c"]) == (327, 4040, 56)
    assert [(p["pid"], p["gi"], p["name"], p["memory_mib"]) for p in record["processes"]] == [
        (1906, None, "/usr/lib/xorg/Xorg", 144),
        (2016, None, "/usr/bin/gnome-shell", 94),
    ]


# Driver 610 renamed the header fields: "KMD Version" (kernel-mode driver) and
# "CUDA UMD Version". Layout as posted in public notes on installing
# nvidia-driver-610-open (GTX 1650, 2026); the numbers are the same ones.
DRIVER_610 = """\
Wed Sep 30 21:53:38 2026
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 610.57.04              KMD Version: 610.57.04     CUDA UMD Version: 13.3     |
+-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA GeForce GTX 1650        Off |   00000000:01:00.0  On |                  N/A |
|  0%   51C    P0            N/A  /   75W |     580MiB /   4096MiB |     39%      Default |
|                                         |                        |                  N/A |
+-----------------------------------------+------------------------+----------------------+
"""


def test_driver_610_kmd_and_cuda_umd_header():
    record = parse(PARSER, DRIVER_610)
    assert (record["driver_version"], record["cuda_version"]) == ("610.57.04", "13.3")
    assert record["version_labels"] == "kmd" and record["smi_version"] == "610.57.04"
    gpu = record["gpus"][0]
    assert (gpu["name"], gpu["bus_id"], gpu["power_w"], gpu["power_cap_w"]) == (
        "NVIDIA GeForce GTX 1650",
        "00000000:01:00.0",
        None,
        75,
    )
    assert (gpu["memory_used_mib"], gpu["gpu_util_pct"], gpu["mig_mode"]) == (580, 39, "N/A")


def test_old_header_labels_are_driver():
    record = parse(PARSER, read(DIRECTORY, "8xL40S-driver565-cuda12.7-with-processes.txt"))
    assert record["version_labels"] == "driver"


def _rows_of(name: str) -> str:
    """A pasted block without its header: the GPU rows only."""
    lines = read(DIRECTORY, name).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|===")) + 1
    return "\n".join(lines[start:]) + "\n"


def test_block_without_header_is_refused_strictly_and_read_leniently():
    fragment = _rows_of(
        "10xA40-PCIe-driver550.127.05-multi-GPU-table-No-running-processes-timestamp-omitted.txt"
    )
    with pytest.raises(ParseError, match="version header"):
        parse(PARSER, fragment)
    reading = read_lenient(PARSER, fragment)
    assert reading.record["gpu_count"] == 10 and reading.record["driver_version"] is None
    assert reading.record["gpus"][5]["bus_id"] == "00000000:CE:00.0"
    assert any("version header" in m for m in reading.missing)


def test_elided_rows_are_said():
    lines = read(DIRECTORY, "8xL40S-driver565-cuda12.7-with-processes.txt").splitlines()
    cut = next(i for i, line in enumerate(lines) if "00000000:D1:00.0" in line)  # GPU 4
    fragment = "\n".join(lines[: cut - 1] + ["..."] + lines[cut + 3 :]) + "\n"
    with pytest.raises(ParseError, match="elided"):
        parse(PARSER, fragment)
    reading = read_lenient(PARSER, fragment)
    assert [g["index"] for g in reading.record["gpus"]] == [0, 1, 2, 3, 5, 6, 7]
    assert reading.missing == ["lines elided ('...') from the table"]


def test_gpu_cut_after_its_first_row():
    text = "\n".join(DRIVER_610.splitlines()[:9]) + "\n"
    reading = read_lenient(PARSER, text)
    assert reading.record["gpus"][0]["bus_id"] == "00000000:01:00.0"
    assert reading.record["gpus"][0]["memory_total_mib"] is None
    assert reading.missing == ["the fan/temp/power row of GPU 0"]
    with pytest.raises(ParseError, match="fan/temp/power row of GPU 0"):
        parse(PARSER, text)


def test_err_values_of_a_failing_gpu_are_null():
    text = DRIVER_610.replace(
        "|  0%   51C    P0            N/A  /   75W |", "| ERR!  ERR!  ERR!           ERR! / ERR!  |"
    )
    gpu = parse(PARSER, text)["gpus"][0]
    assert (gpu["fan_pct"], gpu["temp_c"], gpu["perf"], gpu["power_w"]) == (None, None, "ERR!", None)


def test_not_nvidia_smi_at_all_is_refused_even_leniently():
    with pytest.raises(ParseError, match="expected"):
        read_lenient(PARSER, "hello\nworld\n")


def test_windows_driver_model_in_the_persistence_column():
    text = DRIVER_610.replace("NVIDIA GeForce GTX 1650        Off |", "NVIDIA GeForce GTX 1650       WDDM |")
    gpu = parse(PARSER, text)["gpus"][0]
    assert gpu["persistence_mode"] == "WDDM" and gpu["memory_total_mib"] == 4096
