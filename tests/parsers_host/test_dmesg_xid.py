"""dmesg-xid on every real kernel-log capture, every timestamp style."""

from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse
from runbook.parsers.dmesg_xid import KNOWN_XIDS

from .helpers import check_fixture, fixture_names, read

DIRECTORY = "dmesg-xid"
EXPECTED = {
    "Xid63-row-remapper-single-line-no-timestamp-PCI-0000-10-1c-A100.txt": {
        "count": 1,
        "xids": [63],
        "events.0.pci": "0000:10:1c",
        "events.0.pid": 1896,
        "events.0.name": None,
        "events.0.timestamp": None,
        "events.0.timestamp_style": None,
        "events.0.message": "Row Remapper: New row marked for remapping, reset gpu to activate.",
        "events.0.known": True,
    },
    "gpud-PR46-dmesg-ctime-Xid13-Illegal-Instruction-Parameter-Xid109-CTX-SWITCH-TIMEOUT-peermem.txt": {
        "count": 4,
        "xids": [13, 109],
        "by_xid": {"13": 3, "109": 1},
        "other_lines": 1,
        "events.0.timestamp": "Fri Aug 30 11:43:09 2024",
        "events.0.timestamp_style": "ctime",
        "events.0.pid": None,
        "events.0.name": None,
        "events.0.pci": "0000:cb:00",
        "events.3.pid": 1797828,
        "events.3.name": "pt_main_thread",
        "events.3.message": "Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x58005",
    },
    "gpud-testdata-Xid13-SM-warp-OutOfRange-Xid43-dmesg-decode-iso-kern-warn-prefix-head.txt": {
        "count": 26,
        "xids": [13, 43],
        "by_xid": {"13": 24, "43": 2},
        "by_pci": {"0000:38:00": [13, 43]},
        "events.0.level": "warn",
        "events.0.timestamp_style": "iso",
        "events.0.timestamp": "2025-01-21T02:21:33,498559+00:00",
        "events.0.message": "Graphics SM Warp Exception on (GPC 8, TPC 5, SM 0): Out Of Range Address",
    },
    "gpud-testdata-Xid48-DBE-Xid63-row-remap-Xid94-contained-iso-timestamps-with-peermem-noise.txt": {
        "count": 11,
        "xids": [48, 63, 94],
        "by_xid": {"48": 1, "63": 1, "94": 9},
        "by_pci": {"0000:19:00": [48, 63, 94]},
        "other_lines": 30,
        "events.0.xid": 48,
        "events.0.timestamp": "2024-11-15T12:02:03,470068+00:00",
        "events.2.message": "Contained: SM (0x1). RST: No, D-RST: No",
        "events.3.pid": 1248209,
        "events.3.name": "python3.10",
        "events.3.message": "Ch 00000008",
    },
    "old-driver-2015-Xid32-Channel-ID-intr-Xid31-engmask-no-pid-laptop-Optimus.txt": {
        "count": 3,
        "xids": [31, 32],
        "events.0.xid": 32,
        "events.0.timestamp": "24128.828315",
        "events.0.timestamp_style": "seconds",
        "events.0.pid": None,
        "events.0.message": "Channel ID 00000000 intr 00004000",
        "events.2.message": "Ch 00000003, engmask 00000101, intr 10000000",
    },
}
COVERS = {DIRECTORY: EXPECTED}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_output(name):
    check_fixture("dmesg-xid", DIRECTORY, name, EXPECTED[name])


def test_known_xid_table():
    assert {13, 31, 43, 48, 63, 64, 74, 79, 92, 94, 95, 119} <= set(KNOWN_XIDS)
    record = parse(
        "dmesg-xid", "[ 12.5] NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.\n"
    )
    assert record["events"][0]["meaning"].startswith("GPU has fallen off the bus")
    assert record["unknown_xids"] == []


# The Description column of the NVIDIA Xid Errors catalog (docs.nvidia.com/deploy/xid-errors,
# "Analyzing Xid Errors with the Xid Catalog"): each meaning starts with it.
CATALOG = {
    13: "Graphics Engine Exception",
    31: "GPU memory page fault",
    43: "GPU stopped processing",
    48: "Double Bit ECC Error",
    63: "ECC page retirement or row remapping recording event",
    64: "ECC page retirement or row remapper recording failure",
    74: "NVLink Error",
    79: "GPU has fallen off the bus",
    92: "High single-bit ECC error rate",
    94: "Contained ECC error",
    95: "Uncontained ECC error",
    119: "GSP RPC Timeout",
}
# what the driver itself prints after the Xid number, in the real captures
DRIVER_SAYS = {13: "Graphics", 48: "double bit", 63: "Row Remapper: New row", 94: "Contained"}


def test_meanings_follow_the_catalog():
    for xid, description in CATALOG.items():
        assert KNOWN_XIDS[xid][0].startswith(description), xid


def test_the_driver_text_of_every_real_capture_agrees_with_the_meaning():
    seen = set()
    for name in sorted(fixture_names(DIRECTORY)):
        for event in parse("dmesg-xid", read(DIRECTORY, name))["events"]:
            xid = event["xid"]
            if xid in DRIVER_SAYS and DRIVER_SAYS[xid].lower() in event["message"].lower():
                seen.add(xid)
                assert event["meaning"].startswith(CATALOG[xid]), (name, xid, event["meaning"])
    assert seen == set(DRIVER_SAYS)  # every one was met in a real capture


@pytest.mark.parametrize(
    "prefix,style,stamp",
    [
        ("Nov 15 12:02:03 gpu01 kernel: ", "syslog", "Nov 15 12:02:03"),  # journalctl -k / messages
        ("Nov 15 12:02:03.470068 gpu01 kernel: ", "syslog", "Nov 15 12:02:03.470068"),  # -o short-precise
        ("2024-11-15T12:02:03+0000 gpu01 kernel: ", "iso", "2024-11-15T12:02:03+0000"),  # -o short-iso
        ("[  +0.000094] ", "delta", "+0.000094"),  # dmesg -H
        ("[Nov15 12:02] ", "human", "Nov15 12:02"),  # dmesg -H
        ("kern  :err   : [ 5012.003317] ", "seconds", "5012.003317"),  # dmesg -x
    ],
)
def test_other_timestamp_styles(prefix, style, stamp):
    line = (
        prefix
        + "NVRM: Xid (PCI:0000:ca:00): 119, pid=4177, name=python, Timeout after 6s of waiting for RPC\n"
    )
    event = parse("dmesg-xid", line)["events"][0]
    assert (event["timestamp_style"], event["timestamp"], event["xid"], event["pid"]) == (
        style,
        stamp,
        119,
        4177,
    )


def test_unknown_xid_is_kept_and_flagged():
    record = parse("dmesg-xid", "NVRM: Xid (PCI:0000:19:00): 154, GPU recovery action changed\n")
    assert record["unknown_xids"] == [154] and record["events"][0]["known"] is False


def test_clean_dmesg_is_zero_events_garbage_is_refused():
    clean = "[    0.000000] Linux version 6.5.0\n[    1.234567] mlx5_core 0000:3b:00.0: firmware version: 28.39.1002\n"
    assert parse("dmesg-xid", clean)["count"] == 0
    with pytest.raises(ParseError, match="NVRM: Xid"):
        parse("dmesg-xid", "hello world\n")
    with pytest.raises(ParseError):
        parse("dmesg-xid", "")
