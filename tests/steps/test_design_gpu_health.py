"""GPU health and platform design comparisons (runbook/criteria/designs/gpu_health.py,
platform.py) on the parsed real outputs: what a healthy reading gives, what each
fault reads as, and that an output the parser refuses is never a pass."""

from __future__ import annotations

import copy

from runbook.criteria.design import comparators
from runbook.definition.model import Status

from .helpers import fixture, judge, parse_fixture


def compare(name, record, variables):
    return comparators()[name].func(record, variables)


def test_ecc_real_clean_readings_are_as_designed():
    assert (
        compare("gpu-ecc", parse_fixture("nvidia-smi-q", "nvidia-smi-q-ecc/8xA100"), {"gpus_per_node": 8})
        == []
    )
    assert (
        compare("gpu-ecc", parse_fixture("nvidia-smi-q", "nvidia-smi-q/1xL40S"), {"gpus_per_node": 1}) == []
    )


def test_ecc_names_the_gpu_and_each_problem():
    record = copy.deepcopy(parse_fixture("nvidia-smi-q", "nvidia-smi-q/1xL40S"))
    gpu = record["gpus"][0]
    gpu["ecc"]["volatile"]["dram_uncorrectable"] = 2
    gpu["remapped_rows"].update(pending=True, failure=True)
    gpu["ecc"]["mode_current"] = "Disabled"
    assert compare("gpu-ecc", record, {"gpus_per_node": 1}) == [
        "GPU 00000000:A1:00.0: ECC Disabled (expected Enabled)",
        "GPU 00000000:A1:00.0: uncorrectable ECC errors: 2 since boot, 0 in its lifetime (expected 0)",
        "GPU 00000000:A1:00.0: row remapping pending (applied at the next GPU reset)",
        "GPU 00000000:A1:00.0: row remapping failure occurred (no spare rows: RMA)",
    ]


def test_ecc_counts_the_gpus_against_the_design():
    record = parse_fixture("nvidia-smi-q", "nvidia-smi-q-ecc/8xA100")
    assert compare("gpu-ecc", record, {"gpus_per_node": 9}) == ["9 GPUs expected, nvidia-smi reports 8"]


def test_bar1_real_l40s_large_bar():
    record = parse_fixture("nvidia-smi-q", "nvidia-smi-q/1xL40S")
    assert compare("gpu-bar1", record, {"gpus_per_node": 1, "gpu_bar1_mib": 65536}) == []
    assert compare("gpu-bar1", record, {"gpus_per_node": 1, "gpu_bar1_mib": 256}) == [
        "1 of 1 GPUs: BAR1 expected 256 MiB, found 65536 MiB (00000000:A1:00.0)"
    ]


def test_xid_real_logs_named_with_meaning_and_gpu():
    found = compare("gpu-xid", parse_fixture("dmesg-xid", "dmesg-xid/gpud-testdata-Xid48"), {})
    assert [line.split(":", 1)[0] for line in found] == [
        "Xid 48 on GPU PCI",
        "Xid 63 on GPU PCI",
        "Xid 94 ×9 on GPU PCI",
    ]
    assert found[0].startswith("Xid 48 on GPU PCI:0000:19:00: Double Bit ECC Error")
    single = compare("gpu-xid", parse_fixture("dmesg-xid", "dmesg-xid/Xid63"), {})
    assert single and single[0].startswith("Xid 63 on GPU PCI:0000:10:1c: ")


def test_dcgm_real_all_pass_tables():
    assert compare("dcgm-diag", parse_fixture("dcgmi-diag", "dcgmi-diag/DCGM-4"), {}) == []
    assert compare("dcgm-diag", parse_fixture("dcgmi-diag", "dcgmi-diag/DCGM-2"), {}) == []


def test_dcgm_real_failures_are_each_named():
    found = compare("dcgm-diag", parse_fixture("dcgmi-diag", "dcgmi-diag/DCGM-old-r1"), {})
    assert found == [
        "Deployment Persistence Mode: Fail",
        "Deployment Environment Variables: Fail",
        "Deployment Page Retirement: Fail",
        "Deployment Graphics Processes: Fail",
        "Deployment Inforom: Fail",
    ]


def test_dcgm_step_on_real_outputs():
    verdicts = judge(
        "dcgm-diag",
        {
            "gpu01": fixture("dcgmi-diag/DCGM-4"),
            "gpu02": fixture("dcgmi-diag/DCGM-old-r1"),
            "gpu03": fixture("dcgmi-diag/fragment"),
        },
    )
    assert verdicts["gpu01"].status == Status.PASS
    assert verdicts["gpu02"].status == Status.FAIL and "Deployment Inforom: Fail" in verdicts["gpu02"].reason
    # a table cut off before its end is not read as a pass
    assert verdicts["gpu03"].status == Status.UNKNOWN


def test_copy_bandwidth_real_matrix_against_the_minimum():
    record = parse_fixture("nvbandwidth", "nvbandwidth/nvbandwidth-v0.4.2")
    assert compare("gpu-copy-bandwidth", record, {"gpu_pcie_min_gbps": 18}) == []
    low = compare("gpu-copy-bandwidth", record, {"gpu_pcie_min_gbps": 371})
    assert low == [
        "device_to_device_memcpy_read_ce: expected ≥ 371 GB/s, found 0→1 370.90, 0→2 370.90, "
        "0→3 370.90, 0→4 370.38, 0→5 370.64, 0→6 370.26 and 26 more (row→column GB/s)"
    ]
    # an early build prints 0.00 on the diagonal: not a measurement
    assert (
        compare(
            "gpu-copy-bandwidth",
            parse_fixture("nvbandwidth", "nvbandwidth/nvbandwidth-README"),
            {"gpu_pcie_min_gbps": 18},
        )
        == []
    )


def test_acs_real_switch_ports_all_off_and_one_on():
    record = parse_fixture("lspci-vv", "lspci-acs/gpud")
    assert compare("pcie-acs", record, {}) == []
    changed = copy.deepcopy(record)
    port = next(d for d in changed["devices"] if d.get("acsctl"))
    port["acs_enabled"] = ["ReqRedir", "CmpltRedir"]
    ports = sum(1 for d in changed["devices"] if d.get("acsctl"))
    assert compare("pcie-acs", changed, {}) == [
        f"ACS on at 1 of {ports} switch ports ({port['slot']}): CmpltRedir+ ReqRedir+ (expected every ACSCtl bit off)"
    ]


def test_hca_firmware_real_listing_against_the_design():
    record = parse_fixture("mlxfwmanager", "mlxfwmanager/Shasta")
    design = {
        "hca_firmware": {"ConnectX-5": "16.26.4012", "ConnectX-4": "12.28.2006"},
        "hca_psids": {"ConnectX-5": ["MT_0000000011"], "ConnectX-4": ["MT_0000000010"]},
    }
    found = compare("hca-firmware", record, design)
    assert found == [
        "adapter #2 (/dev/mst/mt4115_pciconf0, MCX416A-BCA_Ax): PSID MT_2130111027 is not a designed part "
        "(expected MT_0000000010 or MT_0000000011)",
        "adapter #2 (/dev/mst/mt4115_pciconf0, MCX416A-BCA_Ax): FW expected 12.28.2006 (ConnectX-4), "
        "found 12.26.4012",
    ]
    # with the PSID planned, only the firmware of its family remains
    design["hca_psids"]["ConnectX-4"].append("MT_2130111027")
    assert compare("hca-firmware", record, design) == [
        "adapter #2 (/dev/mst/mt4115_pciconf0, MCX416A-BCA_Ax): FW expected 12.28.2006 (ConnectX-4), "
        "found 12.26.4012"
    ]
    design["hca_firmware"]["ConnectX-4"] = "12.26.4012"
    assert compare("hca-firmware", record, design) == []
