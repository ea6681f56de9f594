"""nvbandwidth, p2p-bandwidth (p2pBandwidthLatencyTest) and nvidia-smi-topo-p2p on every
real capture of the nvbandwidth folder (the tool is named by the file-name prefix)."""

from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse

from .helpers import check_fixture, read

DIRECTORY = "nvbandwidth"
PARSER_BY_PREFIX = {
    "nvbandwidth": "nvbandwidth",
    "p2pBandwidthLatencyTest": "p2p-bandwidth",
    "topo-p2p": "nvidia-smi-topo-p2p",
}
_H100_ROW2 = [372.05, 370.90, None, 370.90, 372.96, 370.38, 371.67, 371.67]
EXPECTED = {
    "nvbandwidth-README-example-8GPU-device_to_device_memcpy_read_ce-0.00-diagonal-old-format-264GBps.txt": {
        "version": None,
        "devices": [],
        "testcases.0.name": "device_to_device_memcpy_read_ce",
        "testcases.0.unit": "GB/s",
        "testcases.0.matrix.0.0": 0.0,
        "testcases.0.matrix.0.1": 264.36,
        "testcases.0.off_diagonal_min": 263.05,
        "testcases.0.off_diagonal_max": 265.38,
        "testcases.0.sum": None,
        "by_name": {"device_to_device_memcpy_read_ce": 0},
    },
    "nvbandwidth-v0.4.2-Azure-NHC-8xH100-80GB-HBM3-driver570.133.20-d2d-read-ce-N-A-diagonal-SUM-20785.txt": {
        "version": "v0.4",
        "git_version": "v0.4.2-12-g8857188",
        "driver_version": "570.133.20",
        "cuda_runtime_version": 12020,
        "cuda_driver_version": 12080,
        "devices.7": {"index": 7, "name": "NVIDIA H100 80GB HBM3"},
        "testcases.0.sum": 20785.58,
        "testcases.0.matrix.2": _H100_ROW2,
        "testcases.0.off_diagonal_min": 370.26,
        "testcases.0.off_diagonal_max": 372.96,
        "testcases.0.columns": [str(i) for i in range(8)],
    },
    "p2pBandwidthLatencyTest-2xRTX6000Ada-PCIe-CAN-Access-Peer-26GBps-uni-52GBps-bidi-1.1us.txt": {
        "devices.1": {
            "index": 1,
            "name": "NVIDIA RTX 6000 Ada Generation",
            "pci_bus_id": "c2",
            "pci_device_id": "0",
            "pci_domain_id": "0",
        },
        "peer_access": [{"from": 0, "to": 1, "can_access": True}, {"from": 1, "to": 0, "can_access": True}],
        "connectivity": [[1, 1], [1, 1]],
        "matrices.uni_disabled_gbps": [[801.28, 22.23], [22.32, 813.80]],
        "matrices.bidi_enabled_gbps": [[802.94, 52.11], [52.10, 806.22]],
        "matrices.latency_disabled_gpu_us": [[1.39, 10.90], [10.46, 1.45]],
        "matrices.latency_enabled_cpu_us": [[1.64, 1.32], [1.32, 1.58]],
        "uni_enabled_min_gbps": 26.32,
        "bidi_enabled_min_gbps": 52.10,
        "latency_enabled_max_us": 1.14,
    },
    "topo-p2p-p-2xRTX2080Ti-PCIe-NS-not-supported-with-Legend.txt": {
        "gpus": ["GPU0", "GPU1"],
        "pairs": [{"a": "GPU0", "b": "GPU1", "status": "NS"}],
        "all_ok": False,
        "legend.NS": "Not supported",
        "matrix.GPU1.GPU0": "NS",
    },
    "topo-p2p-r-8xH100-all-OK-with-Legend-tabs-as-spaces.txt": {
        "gpus": [f"GPU{i}" for i in range(8)],
        "all_ok": True,
        "not_ok": [],
        "matrix.GPU3.GPU3": "X",
        "legend.OK": "Status Ok",
        "legend.CNS": "Chipset not supported",
    },
}
COVERS = {DIRECTORY: EXPECTED}


def _parser(name: str) -> str:
    return next(p for prefix, p in PARSER_BY_PREFIX.items() if name.startswith(prefix))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_output(name):
    check_fixture(_parser(name), DIRECTORY, name, EXPECTED[name])
    for other in PARSER_BY_PREFIX.values():  # each of the three refuses the other two
        if other != _parser(name):
            with pytest.raises(ParseError):
                parse(other, read(DIRECTORY, name))


def test_cut_nvbandwidth_matrix_is_refused():
    text = "Running device_to_device_memcpy_read_ce.\nmemcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\n"
    with pytest.raises(ParseError, match="no result matrix"):
        parse("nvbandwidth", text)


def test_p2p_cannot_access_peer():
    text = (
        "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\n"
        "Device: 0, NVIDIA L40S, pciBusID: 1, pciDeviceID: 0, pciDomainID:0\n"
        "Device: 1, NVIDIA L40S, pciBusID: 41, pciDeviceID: 0, pciDomainID:0\n"
        "Device=0 CANNOT Access Peer Device=1\nDevice=1 CANNOT Access Peer Device=0\n"
        "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n"
        "   D\\D     0      1\n     0 800.15  21.02\n     1  20.98 831.12\n"
    )
    record = parse("p2p-bandwidth", text)
    assert [a["can_access"] for a in record["peer_access"]] == [False, False]
    assert record["uni_enabled_min_gbps"] == 20.98 and record["bidi_enabled_min_gbps"] is None


def test_topo_p2p_with_a_missing_row_is_refused():
    text = "        GPU0    GPU1\n GPU0   X       OK\n"
    with pytest.raises(ParseError, match="GPU1"):
        parse("nvidia-smi-topo-p2p", text)


def test_nvbandwidth_one_row_matrix_with_right_aligned_labels():
    # the layout of newer versions: labels right-aligned, SUM and COEFFICIENT_OF_VARIATION lines
    text = (
        "Running host_to_device_memcpy_ce.\n"
        "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
        "           0         1\n"
        " 0     55.59     55.60\n\n"
        "SUM host_to_device_memcpy_ce 111.19\n"
        "COEFFICIENT_OF_VARIATION host_to_device_memcpy_ce 0.01\n"
    )
    record = parse("nvbandwidth", text)
    case = record["testcases"][record["by_name"]["host_to_device_memcpy_ce"]]
    assert case["columns"] == ["0", "1"] and case["matrix"] == [[55.59, 55.60]] and case["sum"] == 111.19


def test_nvbandwidth_row_shorter_than_its_header_is_refused():
    with pytest.raises(ParseError):
        parse(
            "nvbandwidth",
            "Running x_ce.\nmemcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
            "          0         1\n0     26.03\n",
        )
