"""etc-consistent (fleet) and ib-write-bw (per link)."""

from __future__ import annotations

from runbook import parsers
from runbook.criteria.design import comparators

from .helpers import fixture

FILES = ["/etc/chrony.conf", "/etc/sysctl.d/90-gpu.conf"]
A, B, C = "a" * 64, "b" * 64, "c" * 64


def _etc(**per_host):
    records = {
        h: parsers.parse("sha256sum", "".join(f"{d}  {p}\n" for p, d in zip(FILES, digests) if d))
        for h, digests in per_host.items()
    }
    return comparators()["etc-consistent"].func(records, {h: {"managed_etc_files": FILES} for h in records})


def test_etc_identical_everywhere():
    assert _etc(gpu01=[A, B], gpu02=[A, B], gpu03=[A, B]) == {"gpu01": [], "gpu02": [], "gpu03": []}


def test_etc_hand_edited_file_names_file_and_outlier():
    out = _etc(gpu01=[A, B], gpu02=[A, C], gpu03=[A, B], gpu04=[A, B])
    assert out["gpu01"] == out["gpu03"] == out["gpu04"] == []
    assert out["gpu02"] == [
        "/etc/sysctl.d/90-gpu.conf: sha256 cccccccccccc…, fleet has bbbbbbbbbbbb… "
        "on 3/4 hosts; outliers gpu02"
    ]


def test_etc_missing_file_and_no_majority():
    out = _etc(gpu01=[A, B], gpu02=[C, None])
    assert out["gpu02"][1] == (
        "/etc/sysctl.d/90-gpu.conf: not read, fleet has bbbbbbbbbbbb… on 1/2 hosts; outliers gpu02"
    )
    assert (
        out["gpu01"]
        == out["gpu02"][:1]
        == ["/etc/chrony.conf: no majority version (aaaaaaaaaaaa… on gpu01; cccccccccccc… on gpu02)"]
    )


BW = {"compute_devices": ["rocep1s0f0", "rocep1s0f1"], "ib_write_bw_min_gbps": 100, "ib_rate_gbps": 200}


def test_ib_write_bw_real_runs():
    one = fixture("ib_write_bw/DGX-Spark")
    record = parsers.parse("ib_write_bw-per-device", one + one.replace("rocep1s0f0", "rocep1s0f1"))
    assert comparators()["ib-write-bw"].func(record, BW) == []
    assert comparators()["ib-write-bw"].func(record, dict(BW, ib_write_bw_min_gbps=180)) == [
        "rocep1s0f0: 111.61 Gb/s, expected ≥ 180, line rate 200 Gb/s",
        "rocep1s0f1: 111.61 Gb/s, expected ≥ 180, line rate 200 Gb/s",
    ]


def test_ib_write_bw_missing_link():
    record = parsers.parse("ib_write_bw-per-device", fixture("ib_write_bw/DGX-Spark"))
    assert comparators()["ib-write-bw"].func(record, BW) == [
        "rocep1s0f1: no ib_write_bw result (the test did not run or could not connect)"
    ]
