"""Where the real tool outputs live and how the IB parser tests read them.

Every test module here declares `CASES = {(directory, file name): check}`;
`check` receives the parsed record and asserts values stated from that file.
test_coverage.py fails when a fixture file has no case, so a newly added
fixture needs someone to state its expected values.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import pytest

from runbook.parsers import parse

# fixture directory -> the parser that reads it
DIRECTORIES = {
    "mlxconfig": "mlxconfig",
    "mst-status": "mst-status",
    "mst-status-v": "mst-status",
    "ibstat": "ibstat",
    "ibstatus": "ibstatus",
    "ibv_devinfo": "ibv_devinfo",
    "sminfo": "sminfo",
    "partitions-conf": "partitions-conf",
    "iblinkinfo": "iblinkinfo",
    "ibnetdiscover": "ibnetdiscover",
    "ibswitches": "ibswitches",
    "ibqueryerrors": "ibqueryerrors",
    "perfquery": "perfquery",
    "saquery": "saquery",
    "smpquery-pkeys": "smpquery-pkeys",
    "smpquery-portinfo": "smpquery-portinfo",
    "rdma-link": "rdma-link",
    "ibdev2netdev": "ibdev2netdev",
    "ibdiagnet": "ibdiagnet",
    "opensm-log": "opensm-log",
    "ib_write_bw": "ib_write_bw",
}

# Directories a parser legitimately reads besides its own (same output format).
ALSO_READS = {"ibnetdiscover": {"ibswitches"},
              # round-2 folders named by subject, holding these tools' own outputs
              "iblinkinfo": {"ibnetdiscover-fattree"}, "ib_write_bw": {"ib_write_bw-cuda"},
              "opensm-log": {"opensm-conf"}}

Check = Callable[[dict], None]


def root() -> Path:
    env = os.environ.get("RUNBOOK_FIXTURES")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "real-outputs"


def text(directory: str, name: str) -> str:
    return (root() / directory / name).read_text(encoding="utf-8")


def parsed(directory: str, name: str) -> dict:
    return parse(DIRECTORIES[directory], text(directory, name))


def fixture_cases(cases: dict[tuple[str, str], Check]):
    """parametrize(directory, name, check) with readable ids."""
    items = sorted(cases.items())
    return pytest.mark.parametrize(
        "directory,name,check", [(d, n, c) for (d, n), c in items], ids=[f"{d}/{n}" for (d, n), _ in items])
