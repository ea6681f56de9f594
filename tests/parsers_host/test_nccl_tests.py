"""nccl-tests on every real capture (newest v2.18 format, classic, table-only, old
'error'-column format, single-GPU edge case), plus failure shapes."""

from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse

from .helpers import check_fixture, read, read_lenient

DIRECTORY = "nccl-tests"
A40 = "A40-PCIe-2GPU-NV4-bridge-g2-1G-8G-NCCL2.16-table-only-47GBps.txt"
EXPECTED = {
    "2node-16xRTX6000D-PCIe-CX8-SpectrumX-v2.18.3-NCCL2.30-mpi-noise-interleaved.txt": {
        "collective": "all_reduce_perf",
        "tests_version": "2.18.3",
        "nccl_version": "2.30.3+cuda13.0",
        "avg_busbw": 18.4247,
        "complete": True,
        "row_count": 24,
        "busbw": 35.29,
        "busbw_in_place": 35.29,
        "max_busbw": 42.14,
        "largest_size": 8589934592,
        "out_of_bounds": 0,
        "out_of_bounds_ok": True,
        "rank_count": 16,
        "ranks.15.host": "R6KD-CX8aaS-GPU-12",
        "ranks.6.bus_id": "0000:f6:00",
        "ranks.0.gpu": "NVIDIA RTX 6000D",
        "params.maxBytes": 8589934592,
        "params.unalign": 0,
        "rows.0.size": 1024,
        "rows.0.out_of_place.time_us": 61.99,
        "rows.15.out_of_place.time_us": 2161.15,
        "rows.18.out_of_place.time_us": 12901.0,
        "rows.23.in_place.time_us": 456421.0,
        "wrong_total": 0,
    },
    "2pod-4xL40S-g2-CX7-NCCL2.27-ranks-per-pod.txt": {
        "avg_busbw": 4.74277,
        "busbw": 9.63,
        "busbw_in_place": 9.62,
        "row_count": 31,
        "rank_count": 4,
        "ranks.2.host": "nvidiatools-30-workload",
        "ranks.1.bus_id": "0000:e1:00",
        "nccl_version": "2.27.3+cuda12.9",
        "params.nGpus": 2,
        "collective": None,
        "rows.0.size": 8,
        "rows.16.out_of_place.time_us": 170.7,
    },
    A40: {
        "avg_busbw": 47.4509,
        "busbw": 47.49,
        "row_count": 4,
        "rows.0.size": 1073741824,
        "rows.0.in_place.busbw": 47.39,
        "rows.0.root": -1,
        "rank_count": 0,
        "nccl_version": None,
        "params": {},
    },
    "ABCI-16xA100-SXM-2node-SHARP-old-format-error-column-no-root.txt": {
        "rows.0.root": None,
        "rows.0.out_of_place.error": 4e-07,
        "rows.1.in_place.error": 1e-07,
        "busbw": 105.46,
        "busbw_in_place": 105.51,
        "max_busbw": 105.51,
        "avg_busbw": 29.0317,
        "rank_count": 16,
        "ranks.8.host": "a0001",
        "ranks.0.bus_id": "0x27",
        "largest_size": 2147483648,
        "row_count": 29,
        "wrong_total": 0,
    },
    "RTX5090-single-GPU-alltoall-busbw0-inplace-wrong-NA-edgecase.txt": {
        "row_count": 1,
        "rows.0.redop": "none",
        "rows.0.in_place.wrong": None,
        "rows.0.out_of_place.wrong": 0,
        "rows.0.out_of_place.algbw": 1715.44,
        "busbw": 0.0,
        "avg_busbw": 0.0,
        "params.step": "1048576(bytes)",
        "ranks.0.host": "GENOA-01",
    },
}
ALLTOALL = "nccl-alltoall"
EXPECTED_ALLTOALL = {
    "alltoall_perf-1node-2xRTX2080Ti-PCIe-g2-8B-1G-busbw-4.6GBps-inplace-wrong-NA-full.txt": {
        "row_count": 28,
        "rows.0.size": 0,
        "rows.0.redop": "none",
        "rows.0.root": -1,
        "rows.0.in_place.wrong": None,
        "rows.0.out_of_place.wrong": 0,
        "busbw": 4.61,
        "busbw_in_place": 4.73,
        "max_busbw": 4.73,
        "largest_size": 1073741824,
        "avg_busbw": 2.06935,
        "complete": True,
        "out_of_bounds_ok": True,
        "rank_count": 2,
        "ranks.1.bus_id": "0000:b5:00",
        "params.nGpus": 2,
        "wrong_total": 0,
    },
    "sendrecv_perf-2node-2xA40-1GPU-per-node-g1-256B-head-5-rows-trailing-spaces-wrong-NA.txt": {
        "row_count": 5,
        "rows.4.size": 4096,
        "rows.4.out_of_place.busbw": 0.13,
        "rows.0.in_place.time_us": 33.65,
        "rows.0.in_place.wrong": None,
        "complete": False,
        "avg_busbw": None,
        "ranks.0.host": "gpu23",
        "ranks.1.host": "gpu24",
        "ranks.1.bus_id": "0x31",
        "params.minBytes": 256,
    },
}
COVERS = {DIRECTORY: EXPECTED, ALLTOALL: EXPECTED_ALLTOALL}


@pytest.mark.parametrize("name", sorted(EXPECTED_ALLTOALL))
def test_alltoall_and_sendrecv_real_output(name):
    check_fixture("nccl-tests", ALLTOALL, name, EXPECTED_ALLTOALL[name])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_output(name):
    check_fixture("nccl-tests", DIRECTORY, name, EXPECTED[name])


def test_failed_validation_is_reported():
    text = read(DIRECTORY, A40).replace("# Out of bounds values : 0 OK", "# Out of bounds values : 3 FAILED")
    text = text.replace("180902   47.48   47.48      0", "180902   47.48   47.48      3")
    record = parse("nccl-tests", text)
    assert (record["out_of_bounds"], record["out_of_bounds_ok"], record["wrong_total"]) == (3, False, 3)


def test_run_that_died_midway_is_incomplete():
    lines = read(DIRECTORY, A40).splitlines()[:5]
    record = parse("nccl-tests", "\n".join(lines))
    assert record["complete"] is False and record["avg_busbw"] is None
    assert record["busbw"] == 47.46  # the largest size that did finish


def test_header_without_rows_and_ragged_rows_are_refused():
    lines = read(DIRECTORY, A40).splitlines()
    with pytest.raises(ParseError, match="no result rows"):
        parse("nccl-tests", "\n".join(lines[:3]))
    with pytest.raises(ParseError, match="row has 12 columns"):
        parse("nccl-tests", "\n".join(lines[:3] + [lines[3].rsplit(None, 1)[0]]))


NOISY = "2node-16xRTX6000D-PCIe-CX8-SpectrumX-v2.18.3-NCCL2.30-mpi-noise-interleaved.txt"


def _without_labels(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != "rank_labels"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize(
    "label,kind",
    [
        (lambda n: "0: ", "srun"),  # srun -l
        (lambda n: f"{n:>2}: ", "srun"),  # srun -l with padded rank numbers
        (lambda n: "[1,0]<stdout>:", "mpirun"),  # mpirun --tag-output
    ],
)
def test_rank_labels_are_stripped(name, label, kind):
    plain = parse("nccl-tests", read(DIRECTORY, name))
    labelled = "".join(label(0) + line + "\n" for line in read(DIRECTORY, name).splitlines())
    record = parse("nccl-tests", labelled)
    assert record["rank_labels"] == kind and plain["rank_labels"] is None
    assert _without_labels(record) == _without_labels(plain)


def test_other_ranks_interleaving_their_noise():
    lines = read(DIRECTORY, NOISY).splitlines()
    out = []
    for i, line in enumerate(lines):
        out.append("[1,0]<stdout>:" + line)
        if i % 5 == 0:  # another rank's NCCL INFO / MPI warning between the table lines
            out.append(
                f"[1,{i % 16}]<stdout>:R6KD-CX8aaS-GPU-12:4770:4770 [1] NCCL INFO Channel 00/0 : "
                "9[1] -> 10[2] via P2P/CUMEM"
            )
            out.append(
                f"[1,{i % 16}]<stderr>:[R6KD-CX8aaS-GPU-12:04770] 1 more process has sent help message"
            )
    record = parse("nccl-tests", "\n".join(out) + "\n")
    assert record["row_count"] == 24 and record["busbw"] == 35.29 and record["avg_busbw"] == 18.4247
    assert record["rank_labels"] == "mpirun"


def test_rows_pasted_without_their_header():
    lines = read(DIRECTORY, NOISY).splitlines()
    rows = [line for line in lines if line.strip()[:1].isdigit() and "float" in line][:6]
    fragment = "\n".join(rows) + "\n"
    with pytest.raises(ParseError, match="header"):
        parse("nccl-tests", fragment)
    reading = read_lenient("nccl-tests", fragment)
    assert reading.record["row_count"] == 6 and reading.record["rows"][0]["size"] == 1024
    assert reading.record["rows"][0]["root"] == -1 and reading.record["rows"][0]["in_place"]["wrong"] == 0
    assert any("column header" in m for m in reading.missing)
    assert any("Avg bus bandwidth" in m for m in reading.missing)


def test_every_rank_printing_its_table_reads_the_first_ranks():
    text = read(DIRECTORY, A40)
    plain = parse("nccl-tests", text)
    both = "".join(f"{rank}: {line}\n" for line in text.splitlines() for rank in (0, 1))
    record = parse("nccl-tests", both)
    assert record["row_count"] == plain["row_count"] and record["busbw"] == plain["busbw"]
    assert record["rank_count"] == plain["rank_count"] and record["avg_busbw"] == plain["avg_busbw"]
