"""dcgmi-diag on every real `dcgmi diag` table capture (DCGM 2.x, old, 4.x, fragment)
and on `dcgmi diag -j` JSON.

No real `-j` capture was published (none in the fixtures): the JSON inputs below are
CONSTRUCTED from the shape DCGM itself emits - DCGM 4.x {"DCGM Diagnostic":
{"test_categories": [{"category", "tests": [{"name", "results": [{"entity_group",
"entity_id", "status", "warnings": [{"warning", "error_id", ...}], "info"}],
"test_summary": {"status"}}]}]}, "metadata": {"version", "Driver Version Detected"}}
and DCGM 3.x {"DCGM GPU Diagnostic": {"test_categories": [... "results": [{"gpu_id",
"status", "warnings"}]]}} - as DCGM's JSON schema and the tools that consume it show.
"""

from __future__ import annotations

import json

import pytest

from runbook.parsers import ParseError, parse

from .helpers import Fragment, check_fixture

DIRECTORY = "dcgmi-diag"
EXPECTED = {
    "DCGM-4.0.0-r3-4xGPU-25b6-driver550.90.07-new-format-per-GPU-lines-lowercase-test-names-all-Pass-docs.txt": {
        "format": "table",
        "layout": "dcgm4",
        "dcgm_version": "4.0.0",
        "driver_version": "550.90.07",
        "gpu_device_ids": ["25b6"] * 4,
        "ok": True,
        "complete": True,
        "failed_tests": [],
        "tests.0.category": "Deployment",
        "tests.0.name": "software",
        "tests.0.result": "Pass",
        "tests.0.gpus": {"0": "Pass", "1": "Pass", "2": "Pass", "3": "Pass"},
        "tests.3.category": "Integration",
        "tests.3.name": "pcie",
        "tests.6.name": "targeted_power",
        "tests.6.category": "Stress",
    },
    "DCGM-2.x-r4-Blacklist-Pass-All-Integration-Hardware-Stress-Memtest-Pulse-all-Pass.txt": {
        "format": "table",
        "layout": "classic",
        "dcgm_version": None,
        "ok": True,
        "complete": True,
        "tests.0.name": "Blacklist",
        "tests.6.name": "Page Retirement/Row Remap",
        "tests.9.category": "Integration",
        "tests.9.name": "PCIe",
        "tests.9.result": "Pass",
        "tests.9.result_text": "Pass - All",
        "tests.17.name": "Memtest",
        "tests.12.name": "Pulse Test",
    },
    "DCGM-old-r1-Blacklist-Deployment-5-Fail-empty-Hardware-Integration-Stress-sections-slurm-prolog.txt": {
        "ok": False,
        "complete": True,
        "failed_tests": [
            "Persistence Mode",
            "Environment Variables",
            "Page Retirement",
            "Graphics Processes",
            "Inforom",
        ],
        "tests.4.result": "Fail",
        "tests.4.messages": [],
        "tests.3.result": "Pass",
    },
    "fragment-Deployment-Error-GPU3-uncorrectable-memory-errors-row-remappings-pending-wrapped.txt": Fragment(
        {
            "ok": False,
            "complete": False,
            "tests": [],
            "messages": [
                {
                    "level": "error",
                    "gpu": 3,
                    "text": "GPU 3 has uncorrectable memory errors and row remappings are pending",
                }
            ],
        },
        missing=("closing border",),
    ),
}
COVERS = {DIRECTORY: EXPECTED}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_output(name):
    check_fixture("dcgmi-diag", DIRECTORY, name, EXPECTED[name])


# Classic layout failure detail rows (DCGM 2.x): a result "Fail - GPU: 0, 1" and
# "| Warning |" rows under the test, one wrapped.
CLASSIC_FAIL = """\
Successfully ran diagnostic for group.
+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Hardware  ----------+------------------------------------------------|
| GPU Memory                | Fail - GPU: 0, 1                               |
| Warning                   | GPU 0 Thermal violations totaling 12.5 seconds |
|                           |  started at 9.1 seconds into the test          |
| Warning                   | GPU 1 Thermal violations totaling 3.0 seconds  |
|-----  Integration  -------+------------------------------------------------|
| PCIe                      | Fail - GPU: 0                                  |
| Warning                   | GPU 0 Error using CUDA API cudaDeviceGetByPCI  |
|                           | BusId Check DCGM and system logs for errors. R |
|                           | eset GPU. Restart DCGM. Rerun diagnostics.     |
+---------------------------+------------------------------------------------+
"""


def test_classic_failure_with_wrapped_warnings():
    record = parse("dcgmi-diag", CLASSIC_FAIL)
    test = record["tests"][0]
    assert (test["result"], test["failed_gpus"]) == ("Fail", [0, 1])
    assert test["messages"][0] == {
        "level": "warning",
        "gpu": 0,
        "text": "GPU 0 Thermal violations totaling 12.5 seconds started at 9.1 seconds into the test",
    }
    assert record["failed_tests"] == ["GPU Memory", "PCIe"] and record["ok"] is False
    assert record["tests"][1]["messages"][0]["text"] == (
        "GPU 0 Error using CUDA API cudaDeviceGetByPCIBusId Check DCGM and system logs for errors. "
        "Reset GPU. Restart DCGM. Rerun diagnostics."
    )


DCGM4_JSON = {
    "DCGM Diagnostic": {
        "test_categories": [
            {
                "category": "Deployment",
                "tests": [
                    {
                        "name": "software",
                        "results": [
                            {"entity_group": "GPU", "entity_id": 0, "status": "Pass"},
                            {"entity_group": "GPU", "entity_id": 1, "status": "Pass"},
                        ],
                        "test_summary": {"status": "Pass"},
                    }
                ],
            },
            {
                "category": "Hardware",
                "tests": [
                    {
                        "name": "memory",
                        "results": [
                            {"entity_group": "GPU", "entity_id": 0, "status": "Pass"},
                            {
                                "entity_group": "GPU",
                                "entity_id": 1,
                                "status": "Fail",
                                "warnings": [
                                    {
                                        "warning": "GPU 1 has uncorrectable memory errors and row remappings are pending",
                                        "error_id": 95,
                                        "error_category": 1,
                                        "error_severity": 3,
                                    }
                                ],
                            },
                        ],
                        "test_summary": {"status": "Fail"},
                    }
                ],
            },
            {
                "category": "Integration",
                "tests": [
                    {
                        "name": "pcie",
                        "results": [
                            {
                                "entity_group": "GPU",
                                "entity_id": 0,
                                "status": "Skip",
                                "info": ["Plugin is not allowed on this SKU"],
                            }
                        ],
                    }
                ],
            },
        ]
    },
    "metadata": {"version": "4.2.3", "Driver Version Detected": "570.124.06"},
}
DCGM3_JSON = {
    "DCGM GPU Diagnostic": {
        "test_categories": [
            {
                "category": "Stress",
                "tests": [
                    {
                        "name": "Targeted Power",
                        "results": [
                            {
                                "gpu_id": "0",
                                "status": "Warn",
                                "warnings": [{"warning": "Power too low", "error_id": 41}],
                            },
                            {"gpu_id": "1", "status": "Pass"},
                        ],
                    }
                ],
            }
        ],
        "version": "3.3.5",
        "Driver Version Detected": "535.161.08",
        "GPU Device IDs": ["20b0", "20b0"],
    },
}


def test_dcgm4_json():
    record = parse("dcgmi-diag", json.dumps(DCGM4_JSON, indent=2))
    assert (record["format"], record["layout"], record["dcgm_version"]) == ("json", "dcgm4", "4.2.3")
    assert record["driver_version"] == "570.124.06"
    memory = record["tests"][1]
    assert memory["result"] == "Fail" and memory["gpus"] == {"0": "Pass", "1": "Fail"}
    assert memory["failed_gpus"] == [1] and memory["messages"][0]["gpu"] == 1
    assert record["failed_tests"] == ["memory"] and record["ok"] is False
    assert record["tests"][2]["result"] == "Skip"
    assert record["tests"][2]["messages"] == [
        {"level": "info", "gpu": 0, "text": "Plugin is not allowed on this SKU"}
    ]


def test_dcgm3_json():
    record = parse("dcgmi-diag", json.dumps(DCGM3_JSON))
    assert (record["layout"], record["dcgm_version"], record["gpu_device_ids"]) == (
        "classic",
        "3.3.5",
        ["20b0", "20b0"],
    )
    test = record["tests"][0]
    assert (test["result"], test["gpus"]) == ("Warn", {"0": "Warn", "1": "Pass"})
    assert record["warned_tests"] == ["Targeted Power"] and record["ok"] is True


def test_bad_json_and_garbage_are_refused():
    with pytest.raises(ParseError, match="JSON"):
        parse("dcgmi-diag", '{"DCGM Diagnostic": ')
    with pytest.raises(ParseError, match="test_categories"):
        parse("dcgmi-diag", '{"something": 1}')
    with pytest.raises(ParseError, match="Diagnostic"):
        parse("dcgmi-diag", "Error: unable to establish a connection to the host engine\n")
