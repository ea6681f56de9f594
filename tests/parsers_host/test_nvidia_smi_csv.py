"""nvidia-smi-csv on every real `--query-gpu --format=csv` capture, plus noheader forms."""

from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse

from .helpers import check_fixture, read

DIRECTORY = "nvidia-smi-query-gpu-csv"
PARSER = "nvidia-smi-csv"
LOOPED = "1xGPU-driver520-csv-with-units-header-brackets-repeated-samples.txt"

EXPECTED = {
    LOOPED: {
        "header": True,
        "count": 13,
        "columns": [
            "index",
            "temperature.gpu",
            "utilization.gpu",
            "utilization.memory",
            "fan.speed",
            "pstate",
            "power.draw",
            "clocks.current.sm",
            "clocks.current.memory",
            "clocks.current.graphics",
        ],
        "units": {
            "utilization.gpu": "%",
            "utilization.memory": "%",
            "fan.speed": "%",
            "power.draw": "W",
            "clocks.current.sm": "MHz",
            "clocks.current.memory": "MHz",
            "clocks.current.graphics": "MHz",
        },
        ("rows", 0, "index"): "0",
        ("rows", 0, "temperature.gpu"): "56",
        ("rows", 0, "utilization.gpu"): "26",
        ("rows", 0, "power.draw"): "83.92",
        ("rows", 0, "clocks.current.sm"): "1320",
        ("rows", 0, "pstate"): "P3",
        ("rows", 7, "power.draw"): "77.00",
        ("rows", 12, "power.draw"): "83.43",
    },
    "7xB300-driver_version-name-compute_cap.txt": {
        "header": True,
        "count": 7,
        "units": {},
        "columns": ["driver_version", "name", "compute_cap"],
        "rows.0.driver_version": "610.57.04",
        "rows.6.name": "NVIDIA B300 SXM6 AC",
        "rows.0.compute_cap": "10.3",
    },
}
COVERS = {DIRECTORY: EXPECTED}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_output(name):
    check_fixture(PARSER, DIRECTORY, name, EXPECTED[name])


def test_noheader_nounits_rows_are_lists():
    # the first sample of the looped capture as `--format=csv,noheader,nounits` prints it
    record = parse(PARSER, "0, 56, 26, 4, 34, P3, 83.92, 1320, 5001, 1320\n")
    assert record["header"] is False and record["columns"] is None
    assert record["rows"] == [["0", "56", "26", "4", "34", "P3", "83.92", "1320", "5001", "1320"]]


def test_missing_values_become_null():
    record = parse(PARSER, "index, name, power.draw [W]\n0, NVIDIA L40S, [N/A]\n1, NVIDIA L40S, 33.44 W\n")
    assert [r["power.draw"] for r in record["rows"]] == [None, "33.44"]


def test_ragged_rows_are_refused():
    text = read(DIRECTORY, LOOPED) + "0, 55\n"
    with pytest.raises(ParseError, match="has 2 fields"):
        parse(PARSER, text)
