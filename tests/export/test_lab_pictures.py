"""The report's pictures of issue 14's done-when and issue 17 item 7, drawn
from a real run: the shipped runbook over SSH against a simulated lab with
`cable_ber` on gpu03 mlx5_2 and `slow_node` on gpu06, exported and signed.
The pair picture, the job split and the rail picture mark exactly that link and
that host; a second lab with a NIC in the other socket (`nic_numa_mismatch`)
gets its GPU↔NIC grid drawn, and only one passing node besides."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from runbook.export import export_run
from tests.steps.simlab import LabRun, run_scenarios

CABLE = ("gpu03", "mlx5_2")
SLOW = "gpu06"
MOVED = ("gpu02", "mlx5_1")


async def _export(run: LabRun, out: Path, key: Path):
    snap = run.session.store.snapshot(run.session.runbook, run.session.inventory)
    return export_run(snap, out / "log.json", sign_key=str(key), identity="a@b")


@pytest.fixture(scope="module")
def reports(tmp_path_factory, keys):
    directory = tmp_path_factory.mktemp("lab-pictures")

    async def demo(d):
        run = await LabRun.start(
            d, nodes=8, faults={CABLE[0]: [{"cable_ber": CABLE[1]}], SLOW: ["slow_node"]}
        )
        try:
            await run.run(None)
            return await _export(run, d, keys["ed25519"])
        finally:
            await run.stop()

    async def topology(d):
        run = await LabRun.start(d, nodes=4, faults={MOVED[0]: [{"nic_numa_mismatch": MOVED[1]}]})
        try:
            await run.run(["gpu-nic-topology"])
            return await _export(run, d, keys["ed25519"])
        finally:
            await run.stop()

    return run_scenarios(directory, {"demo": demo, "topology": topology})


def _svgs(page: str, cls: str) -> list[str]:
    return re.findall(rf'<svg xmlns="http://www.w3.org/2000/svg" class="{cls}".*?</svg>', page, re.S)


def _titles(svg: str) -> list[str]:
    return re.findall(r"<title>(.*?)</title>", svg)


def test_the_pair_picture_names_exactly_the_marginal_link(reports) -> None:
    page = reports["demo"].html.read_text()
    pairs = _svgs(page, "pairs")
    assert len(pairs) == 2  # ib-pair-bw and ib-cross-rail-bw
    for svg in pairs:
        named = [t for t in _titles(svg) if "named slow" in t]
        assert len(named) == 1 and named[0].startswith("gpu03 mlx5_2 (rail 3):"), named
        assert svg.count('class="named"') == 1
        assert "✗✗ gpu04" in svg  # the first partner, then the tie-break's
    assert page.count('Slow links named: rail 3 mlx5_2: <span class="nodeset">gpu03</span>') == 2
    assert 'Slow hosts named: <span class="nodeset">none</span>' in page


def test_the_job_split_names_exactly_the_slow_node(reports) -> None:
    page = reports["demo"].html.read_text()
    launch = _svgs(page, "launch")
    assert launch, "no job-split picture"
    alltoall = page[page.index("<h2>Job split (<code>nccl-alltoall</code>)") :]
    assert alltoall.index('Slow hosts named: <span class="nodeset">gpu06</span>') < alltoall.index("<h2>", 5)
    assert "round 1: job over gpu[01-08]: fail" in launch[0]


def test_the_rail_picture_marks_the_slow_link_only(reports) -> None:
    page = reports["demo"].html.read_text()
    (rails,) = _svgs(page, "rails")
    slow = [t for t in _titles(rails) if "slow or erroring" in t]
    assert len(slow) == 1 and slow[0].startswith("gpu03 mlx5_2: ▼ leaf03:"), slow
    for step in ("fabric-health", "link-ber", "ib-pair-bw"):
        assert step in slow[0]
    assert not [t for t in _titles(rails) if "✗" in t]  # no cable is in the wrong leaf here


def test_the_markdown_has_the_text_versions(reports) -> None:
    md = reports["demo"].markdown.read_text()
    assert "## Pair results (ib-pair-bw)" in md and "Slow links named: `rail 3 mlx5_2: gpu03`" in md
    assert "## Job split (nccl-alltoall)" in md and "Slow hosts named: `gpu06`" in md
    assert "▼ leaf03:" in md and "Slow or erroring links: gpu03 mlx5\\_2" in md


def test_the_topology_draws_the_deviating_node_and_one_example(reports) -> None:
    page = reports["topology"].html.read_text()
    grids = _svgs(page, "topology")
    hosts = [re.search(r'aria-label="GPU to NIC topology of (\S+)"', g).group(1) for g in grids]
    assert hosts == ["gpu02", "gpu01"]  # the deviating one, then one as designed
    bad = grids[0]
    named = [t for t in _titles(bad) if "by the design" in t]
    assert named and all(t.startswith("gpu02 mlx5_1 ↔ GPU") for t in named), named
    assert "GPU2≠" in bad and "≠" not in grids[1]
    assert 'As designed: <span class="nodeset">gpu[01,03-04]</span>' in page
    md = reports["topology"].markdown.read_text()
    assert "**gpu02**: fail — deviates" in md and "✗SYS" in md


def test_no_pictures_without_such_steps(tmp_path: Path, keys: dict) -> None:
    from .snapshot_builder import SnapshotBuilder

    b = SnapshotBuilder()
    b.host("gpu01")
    b.step("ofed", "software")
    b.result("ofed", "gpu01")
    r = export_run(
        b.finish("pass").build(), tmp_path / "log.json", sign_key=str(keys["ed25519"]), identity="a@b"
    )
    page = r.html.read_text()
    assert 'class="pairs"' not in page and 'class="launch"' not in page and 'class="topology"' not in page


def test_the_pictures_print_to_pdf_in_a_real_browser(reports, tmp_path: Path) -> None:
    import shutil
    import subprocess

    from runbook.export.pdf import find_chromium, print_pdf

    chromium = find_chromium()
    if chromium is None or shutil.which("pdftotext") is None:
        pytest.skip("no Chromium or no pdftotext: the PDF print is not exercised on this machine")
    pdf = print_pdf(reports["demo"].html, tmp_path / "demo.pdf", chromium)
    text = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, timeout=60
    ).stdout
    for expected in ("Pair results (ib-pair-bw)", "Job split (nccl-alltoall)", "✗✗ gpu04 108.0", "▼ leaf03:"):
        assert expected in text, expected
