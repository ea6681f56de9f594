"""nvidia-smi-topo on every real `nvidia-smi topo -m` capture, plus damaged variants."""

from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse

from .helpers import check_fixture, read

DIRECTORY = "nvidia-smi-topo-m"
PARSER = "nvidia-smi-topo"

EXPECTED = {
    "2xA100-visible-NV12-8xmlx5-TABS-old-mlx5-column-names-no-GPU-NUMA-ID-no-NIC-legend.txt": {
        "gpu_count": 2,
        "nic_count": 8,
        "legend": True,
        "nic_legend": False,
        "has_gpu_numa_id": False,
        "gpus.0.cpu_affinity": "48-95,144-191",
        "gpus.1.cpus": list(range(48, 96)) + list(range(144, 192)),
        "gpus.0.numa": 1,
        "gpus.0.gpu_numa_id": None,
        "nics.0.name": "mlx5_0",
        "nics.0.device": "mlx5_0",
        "matrix.GPU0.GPU0": "X",
        "matrix.GPU0.GPU1": "NV12",
        "matrix.GPU0.mlx5_6": "PXB",
        "matrix.mlx5_7.mlx5_6": "PIX",
        "matrix.mlx5_7.mlx5_7": "X",
        "matrix_by_device.mlx5_4.GPU1": "NODE",
        "nic_by_device.mlx5_3": "mlx5_3",
    },
    "4xRTX6000Ada-4xmlx5-driver575-nic-legend.txt": {
        "gpu_count": 4,
        "nic_count": 4,
        "nic_legend": True,
        "has_gpu_numa_id": True,
        "gpus.2.cpu_affinity": "32-63",
        "gpus.2.numa": 1,
        "gpus.1.numa": 0,
        "gpus.0.gpu_numa_id": None,
        "nics.3.name": "NIC3",
        "nics.3.device": "mlx5_3",
        "matrix.NIC0.NIC1": "PIX",
        "matrix.GPU2.NIC3": "NODE",
        "matrix_by_device.mlx5_2.GPU3": "NODE",
        "matrix_by_device.GPU0.mlx5_2": "SYS",
        "nic_by_device.mlx5_1": "NIC1",
    },
    "7xB300-NV18-no-NICs-no-NIC-legend.txt": {
        "gpu_count": 7,
        "nic_count": 0,
        "nic_legend": False,
        "legend": True,
        "gpus.0.cpus": [0, 2, 4, 6, 8, 10],
        "gpus.3.cpu_affinity": "1,3,5,7,9,11",
        "gpus.6.numa": 1,
        "gpus.2.numa": 0,
        "matrix.GPU5.GPU6": "NV18",
        "matrix.GPU6.GPU6": "X",
        "nic_by_device": {},
    },
    "8xA100-SXM-NV12-10xmlx5-TABS-nic-legend-no-gpu-numa-id.txt": {
        "gpu_count": 8,
        "nic_count": 10,
        "nic_legend": True,
        "has_gpu_numa_id": False,
        "gpus.4.cpu_affinity": "112-127,240-255",
        "gpus.4.numa": 7,
        "gpus.7.numa": 5,
        "gpus.2.gpu_numa_id": None,
        "matrix.GPU0.NIC0": "PXB",
        "matrix.NIC8.NIC9": "PIX",
        "matrix.NIC9.GPU0": "SYS",
        "matrix.GPU3.GPU3": "X",
        "matrix_by_device.mlx5_9.mlx5_8": "PIX",
        "nics.9.device": "mlx5_9",
    },
    "8xH100-SXM-NV18-8xmlx5-driver570-nic-legend.txt": {
        "gpu_count": 8,
        "nic_count": 8,
        "matrix.GPU0.NIC0": "PIX",
        "matrix.GPU3.NIC3": "PIX",
        "matrix.GPU4.NIC0": "SYS",
        "matrix.NIC7.NIC7": "X",
        "matrix.GPU1.GPU7": "NV18",
        "gpus.4.cpu_affinity": "48-95,144-191",
        "gpus.0.numa": 0,
        "gpus.7.numa": 1,
        "matrix_by_device.mlx5_5.GPU5": "PIX",
        "matrix_by_device.GPU5.mlx5_5": "PIX",
    },
    "8xRTX5090-PCIe-noNVLink-2xmlx5-driver590-nic-legend.txt": {
        "gpu_count": 8,
        "nic_count": 2,
        "gpus.4.cpu_affinity": "128-255,384-511",
        "gpus.7.numa": 1,
        "gpus.0.cpus": list(range(0, 128)) + list(range(256, 384)),
        "matrix.GPU0.NIC0": "NODE",
        "matrix.GPU4.NIC1": "SYS",
        "matrix.NIC0.NIC1": "PIX",
        "matrix.GPU0.GPU1": "NODE",
        "nics.1.device": "mlx5_1",
    },
    "8xRTXA6000-PCIe-NV4-bridge-pairs-2xmlx5-PHB-nic-legend.txt": {
        "gpu_count": 8,
        "nic_count": 2,
        "matrix.GPU0.GPU1": "NV4",
        "matrix.GPU6.NIC0": "PHB",
        "matrix.GPU7.NIC0": "NODE",
        "matrix.GPU0.NIC0": "SYS",
        "gpus.5.cpu_affinity": "64-127",
        "gpus.3.numa": 0,
        "nics.1.device": "mlx5_1",
        "matrix_by_device.mlx5_0.GPU6": "PHB",
    },
}
COVERS = {DIRECTORY: EXPECTED}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_output(name):
    check_fixture(PARSER, DIRECTORY, name, EXPECTED[name])


H100 = "8xH100-SXM-NV18-8xmlx5-driver570-nic-legend.txt"


def test_matrix_is_symmetric_on_a_real_capture():
    record = parse(PARSER, read(DIRECTORY, H100))
    for row, cells in record["matrix"].items():
        for col, cell in cells.items():
            assert record["matrix"][col][row] == cell


def test_truncated_paste_is_refused():
    lines = read(DIRECTORY, H100).splitlines()
    cut = "\n".join(lines[:14])  # header + 8 GPU rows + 5 of the 8 NIC rows
    with pytest.raises(ParseError, match="16 devices but 13 rows"):
        parse(PARSER, cut)


def test_nic_labels_without_legend_keep_their_label():
    text = read(DIRECTORY, H100).split("NIC Legend:")[0]
    record = parse(PARSER, text)
    assert record["nic_legend"] is False
    assert record["nics"][0] == {"name": "NIC0", "device": None}
    assert record["matrix_by_device"]["NIC0"]["GPU0"] == "PIX"
    assert record["nic_by_device"] == {}


def test_crlf_paste_reads_the_same():
    text = read(DIRECTORY, H100)
    assert parse(PARSER, text.replace("\n", "\r\n")) == parse(PARSER, text)


def test_a_row_with_a_wrong_cell_count_is_refused():
    lines = read(DIRECTORY, H100).splitlines()
    lines[1] = lines[1].replace("NV18    NV18", "NV18", 1)
    with pytest.raises(ParseError, match="row GPU0 should have 16 cells"):
        parse(PARSER, "\n".join(lines))
