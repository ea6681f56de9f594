"""nvbandwidth on every real nvbandwidth capture (the nvbandwidth/ directory also
holds p2pBandwidthLatencyTest and `nvidia-smi topo -p2p` outputs, named by their
file-name prefix: those are another tool's and must be refused), and on the
host_to_device layout NVIDIA's README prints."""
from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse

from .helpers import check_fixture, fixture_names, fixtures_root, read

DIRECTORY = "nvbandwidth"
EXPECTED = {
    "nvbandwidth-README-example-8GPU-device_to_device_memcpy_read_ce-0.00-diagonal-old-format-264GBps.txt": {
        "version": None, "devices": {},
        "testcases.device_to_device_memcpy_read_ce.columns": [str(i) for i in range(8)],
        "testcases.device_to_device_memcpy_read_ce.rows.0.0": 0.0,
        "testcases.device_to_device_memcpy_read_ce.rows.0.1": 264.36,
        "testcases.device_to_device_memcpy_read_ce.rows.7.6": 265.10,
        "testcases.device_to_device_memcpy_read_ce.sum": None,
    },
    "nvbandwidth-v0.4.2-Azure-NHC-8xH100-80GB-HBM3-driver570.133.20-d2d-read-ce-N-A-diagonal-SUM-20785.txt": {
        "version": "v0.4", "driver_version": "570.133.20", "devices.7": "NVIDIA H100 80GB HBM3",
        "testcases.device_to_device_memcpy_read_ce.rows.0.0": None,
        "testcases.device_to_device_memcpy_read_ce.rows.2.4": 372.96,
        "testcases.device_to_device_memcpy_read_ce.sum": 20785.58,
    },
}
OTHER_TOOLS = ("p2pBandwidthLatencyTest-", "topo-p2p-")


def test_every_nvbandwidth_file_is_covered():
    ours = {n for n in fixture_names(DIRECTORY) if not n.startswith(OTHER_TOOLS)}
    assert ours == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_output(name):
    check_fixture("nvbandwidth", DIRECTORY, name, EXPECTED[name])


def test_host_to_device_one_row_matrix_right_aligned_labels():
    # the layout of newer versions: labels right-aligned, SUM and COEFFICIENT_OF_VARIATION lines
    text = ("Running host_to_device_memcpy_ce.\n"
            "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
            "           0         1\n"
            " 0     55.59     55.60\n\n"
            "SUM host_to_device_memcpy_ce 111.19\n"
            "COEFFICIENT_OF_VARIATION host_to_device_memcpy_ce 0.01\n")
    case = parse("nvbandwidth", text)["testcases"]["host_to_device_memcpy_ce"]
    assert case["rows"] == {"0": [55.59, 55.60]} and case["sum"] == 111.19


def test_a_cut_off_testcase_is_refused():
    with pytest.raises(ParseError, match="no bandwidth matrix"):
        parse("nvbandwidth", "Running host_to_device_memcpy_ce.\nmemcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n")
    with pytest.raises(ParseError, match="row 0 has 1 values for 2 columns"):
        parse("nvbandwidth", "Running x_ce.\nmemcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
                             "          0         1\n0     26.03\n")


def test_other_tools_output_is_refused():
    root = fixtures_root()
    for d in root.iterdir():
        if not d.is_dir():
            continue
        for f in d.iterdir():
            if not f.is_file() or (d.name == DIRECTORY and not f.name.startswith(OTHER_TOOLS)):
                continue
            with pytest.raises(ParseError):
                parse("nvbandwidth", read(d.name, f.name))
