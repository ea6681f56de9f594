"""The rail cabling picture (issue 17, item 7): hosts × ports → leaf, drawn from
the rail-cabling step's recorded outputs, the wrong links marked. The outputs
come from the simulator with its `wrong_rail` fault (a compute cable swapped
into the next rail's leaf); the verdict is the real comparator's."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from runbook.criteria.design import comparators
from runbook.export import export_run
from runbook.inventory.load import host_vars, load_inventory
from runbook.parsers import parse
from runbook.sim.cluster import Cluster
from runbook.sim.design import load_design
from runbook.sim.faults import inject
from runbook.sim.machine import Machine
from runbook.sim.session import run_line

from .snapshot_builder import SnapshotBuilder

REPO = Path(__file__).resolve().parents[2]
CMD = 'ibdev2netdev -v; ibstat; iblinkinfo | grep -F "$(ibstat -p)"'


def outputs() -> dict[str, str]:
    cluster = Cluster.build(load_design(), 3)
    inject(cluster, cluster.nodes["gpu02"], "wrong_rail", None)
    machines: dict[str, Machine] = {}
    for name, state in cluster.nodes.items():
        machines[name] = Machine(cluster, state, peers=machines.get)

    async def run() -> dict[str, str]:
        return {h: (await run_line(machines[h], CMD))[0] for h in ("gpu01", "gpu02", "gpu03")}

    return asyncio.run(run())


def rail_snapshot() -> dict:
    inventory = load_inventory(REPO / "inventory")
    b = SnapshotBuilder()
    b.step(
        "rail-cabling",
        "fabric",
        "Every rail port cabled to its rail's leaf",
        CMD,
        expect=[{"design": "rail-cabling"}],
    )
    b.steps[-1]["definition"]["verify"]["parse"] = "rail-links-by-pci"
    from runbook.definition.model import Step

    d = b.steps[-1]["definition"]
    b.steps[-1]["sha256"] = Step(
        "rail-cabling", d["title"], "fabric", "fabric", d["why"], "compute", None, definition=d
    ).sha256
    for host, out in outputs().items():
        b.host(host)
        mismatches = comparators()["rail-cabling"].func(
            parse("rail-links-by-pci", out), host_vars(inventory, host)
        )
        b.result(
            "rail-cabling",
            host,
            "fail" if mismatches else "pass",
            stdout=out,
            command=CMD,
            reason="; ".join(mismatches),
        )
    return b.finish("fail").build()


def test_the_picture_marks_the_swapped_cables(tmp_path: Path, keys: dict) -> None:
    r = export_run(rail_snapshot(), tmp_path / "log.json", sign_key=str(keys["ed25519"]), identity="a@b")
    page = r.html.read_text()
    svg = page[page.index('<svg xmlns="http://www.w3.org/2000/svg" class="rails"') :]
    svg = svg[: svg.index("</svg>")]
    titles = re.findall(r"<title>(.*?)</title>", svg)
    wrong = [t for t in titles if "✗" in t]
    # the fault swaps mlx5_0 (rail 1) with the next rail's cable on gpu02 only
    assert wrong and all(t.startswith("gpu02 ") for t in wrong)
    assert any(t.startswith("gpu02 mlx5_0: ✗ leaf02:") and t.endswith("≠ leaf01") for t in wrong), wrong
    assert "gpu01 mlx5_0: leaf01:" in " ".join(titles) and "gpu03 mlx5_3: leaf04:" in " ".join(titles)
    assert svg.count("→ leaf01") == 1  # the rail's leaf, by the fleet, under mlx5_0
    md = r.markdown.read_text()
    assert "## Rail cabling (rail-cabling)" in md and "✗ leaf02:" in md


def test_no_picture_without_a_rail_cabling_step(tmp_path: Path, keys: dict) -> None:
    b = SnapshotBuilder()
    b.host("gpu01")
    b.step("ofed", "software")
    b.result("ofed", "gpu01")
    r = export_run(
        b.finish("pass").build(), tmp_path / "log.json", sign_key=str(keys["ed25519"]), identity="a@b"
    )
    assert "Rail cabling" not in r.html.read_text() and "Rail cabling" not in r.markdown.read_text()
