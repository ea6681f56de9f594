"""Where the real tool outputs live and how the IB parser tests read them.

Every test module here declares `CASES = {(directory, file name): check}`;
`check` receives the parsed record and asserts values stated from that file.
test_coverage.py fails when a fixture file has no case, so a newly added
fixture needs someone to state its expected values.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from runbook.parsers import ParseError, parse, read

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
    "flint": "flint",
    "mlxfwmanager": "mlxfwmanager",
    "mlxlink": "mlxlink",
    "ib_write_bw-cuda": "ib_write_bw",
    "ibnetdiscover-fattree": "iblinkinfo",  # the folder holds an `iblinkinfo -S` of a 2-switch fabric
    "opensm-conf": "opensm-conf",
    "ibdiagnet-pc": "ibdiagnet",
}
# Published FRAGMENTS: the strict parser (a step's verify) must refuse them; their
# case checks what the lenient reading (`runbook parse`) makes of them.
FRAGMENTS = {
    (
        "ibdiagnet-pc",
        "ibdiagnet2-rail_validation-Rail-Optimized-Topology-Validation-finished-successfully-section.txt",
    ),
    (
        "ibdiagnet-pc",
        "ibdiagnet2-sharp-check-trees-Fabric-Summary-24-nodes-4-switches-4-aggregation-nodes-LL-trees.txt",
    ),
}
# Files of a folder that another tool printed (the folder holds both): file -> parser.
FILE_PARSERS = {
    (
        "opensm-conf",
        "systemctl-status-opensm-OpenSM-3.3.20-two-instances-one-Exiting-SM-other-Entering-"
        "STANDBY-state-journal-lines.txt",
    ): "opensm-log",
}

# Directories a parser legitimately reads besides its own (same output format).
ALSO_READS = {
    "ibnetdiscover": {"ibswitches"},
    # round-2 folders named by subject, holding these tools' own outputs
    "iblinkinfo": {"ibnetdiscover-fattree"},
    "ib_write_bw": {"ib_write_bw-cuda"},
    "opensm-log": {"opensm-conf"},
}

Check = Callable[[dict], None]


def root() -> Path:
    from tests.fixtures_path import configured  # the one fixture locator

    return configured()


def text(directory: str, name: str) -> str:
    return (root() / directory / name).read_text(encoding="utf-8")


def parsed(directory: str, name: str) -> dict:
    parser = FILE_PARSERS.get((directory, name), DIRECTORIES[directory])
    if (directory, name) in FRAGMENTS:
        with pytest.raises(ParseError):
            parse(parser, text(directory, name))
        reading = read(parser, text(directory, name), lenient=True)
        assert reading.missing, f"{name}: a fragment read without naming what is missing"
        return reading.record
    return parse(parser, text(directory, name))


def fixture_cases(cases: dict[tuple[str, str], Check]):
    """parametrize(directory, name, check) with readable ids."""
    items = sorted(cases.items())
    return pytest.mark.parametrize(
        "directory,name,check", [(d, n, c) for (d, n), c in items], ids=[f"{d}/{n}" for (d, n), _ in items]
    )
