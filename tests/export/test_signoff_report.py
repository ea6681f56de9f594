"""The report as a sign-off document (issue 17, item 7): the rulebook's verdict
and a sign-off block first; changes with their final status and `before` as
key=value; evidence showing the failing part of the output; approvals naming
the commands as they ran; the four files' names."""

from __future__ import annotations

import json
import re
from pathlib import Path

from runbook.export import export_run, verify_log

from .snapshot_builder import SnapshotBuilder

LINK_CMD = "mlxconfig -d /dev/mst/mt4129_pciconf0 q LINK_TYPE_P1"
APPLY_CMD = "mlxconfig -y -d /dev/mst/mt4129_pciconf0 set LINK_TYPE_P1=1"
NOISE = "".join(f"         Device #{i} header line\n" for i in range(1, 20))
FAILING = NOISE + "         LINK_TYPE_P1                                ETH(2)\n" + "tail\n" * 10


def signoff_snapshot(fixed: bool = True) -> dict:
    b = SnapshotBuilder()
    for h in ("gpu01", "gpu02", "gpu03"):
        b.host(h, ofed_version="23.10-1.1.9.0", gpus_per_node=8, gpu_pci_id="10de:2330")
    b.step(
        "ofed-version",
        "software",
        "OFED version",
        "ofed_info -s",
        expect=[{"path": "version", "eq": "{{ ofed_version }}"}],
    )
    b.step(
        "gpu-inventory", "hardware", "GPUs as designed", "nvidia-smi -q", expect=[{"design": "gpu-inventory"}]
    )
    b.step("link-type-ib", "nic-mode", "ConnectX ports in InfiniBand mode", LINK_CMD)
    for h in ("gpu01", "gpu02", "gpu03"):
        b.result("ofed-version", h, stdout="MLNX_OFED_LINUX-23.10-1.1.9.0:\n")
        if h != "gpu02":
            b.result("link-type-ib", h, stdout="LINK_TYPE_P1 IB(1)\n")
    b.result("gpu-inventory", "gpu01")
    b.result("gpu-inventory", "gpu02")
    b.result("gpu-inventory", "gpu03", "fail", reason="expected 8 GPUs, found 7")
    b.decide("waive", "gpu-inventory", "gpu03", "GPU 5 replaced under RMA 4411", expires=b.t + 86400 * 30)
    failing = b.result(
        "link-type-ib",
        "gpu02",
        "fail",
        stdout=FAILING,
        command=LINK_CMD,
        reason="LINK_TYPE_P1: expected IB(1), found ETH(2)",
    )
    if not fixed:  # the failure stays
        return b.finish("fail").build()
    b.decide(
        "approve",
        "link-type-ib",
        "gpu02",
        "apply confirmed: mlxconfig -y -d {{ mst_device }} set LINK_TYPE_P1=1",
    )
    b.result(
        "link-type-ib",
        "gpu02",
        "pending",
        action="apply",
        stdout="Applying... Done!\n",
        command=APPLY_CMD,
        reason="applied; re-verify pending",
        before={"LINK_TYPE_P1": "ETH(2)", "mst_dump": "x" * 300},
    )
    b.results.remove(failing)  # the store keeps the latest result of each (step, action, host)
    b.result("link-type-ib", "gpu02", stdout="LINK_TYPE_P1 IB(1)\n", command=LINK_CMD)
    return b.finish("fail").build()


def export(tmp_path: Path, keys: dict, snapshot: dict):
    return export_run(
        snapshot, tmp_path / "acme.json", sign_key=str(keys["ed25519"]), identity="jdoe@integrator.example"
    )


def test_files_are_named_after_the_log_without_json(tmp_path: Path, keys: dict) -> None:
    r = export(tmp_path, keys, signoff_snapshot())
    assert [p.name for p in (r.log, r.signature, r.markdown, r.html)] == [
        "acme.json",
        "acme.json.sig",
        "acme.md",
        "acme.html",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "acme.html",
        "acme.json",
        "acme.json.sig",
        "acme.md",
    ]
    assert verify_log(r.log).ok


def test_verdict_and_sign_off_block_come_first(tmp_path: Path, keys: dict) -> None:
    r = export(tmp_path, keys, signoff_snapshot())
    md = r.markdown.read_text()
    head = md[: md.index("## Run")]
    # every host passes or is waived: the rulebook's verdict is "waived" (run/rules.py run_status)
    assert "**Overall verdict: WAIVED** (exit code 0)" in head
    for label in (
        "- Site: seed",
        "- Scope: 3 hosts `gpu[01-03]`, 3 steps in 3 phases",
        "- Verdict: **WAIVED**",
        "- Open items: none",
        "- Signer: jdoe@integrator.example, ssh-ed25519 key SHA256:",
        "allowed_signers file",
    ):
        assert label in head, label
    assert re.search(
        r"gpu-inventory on gpu03 by alice: GPU 5 replaced under RMA 4411 \(expires \d{4}-\d\d-\d\d ", head
    )
    page = r.html.read_text()
    assert page.index("Overall verdict: WAIVED") < page.index("Summary per phase")
    assert "<td>Open items</td><td>none</td>" in page


def test_an_unfixed_failure_is_an_open_item_and_fails_the_verdict(tmp_path: Path, keys: dict) -> None:
    md = export(tmp_path, keys, signoff_snapshot(fixed=False)).markdown.read_text()
    head = md[: md.index("## Run")]
    assert "**Overall verdict: FAIL** (exit code 1)" in head
    assert "- Open items: 1\n  - link-type-ib (ConnectX ports in InfiniBand mode): fail on gpu02" in head


def test_changes_show_final_status_and_before_as_key_values(tmp_path: Path, keys: dict) -> None:
    r = export(tmp_path, keys, signoff_snapshot())
    md = r.markdown.read_text()
    row = next(ln for ln in md.splitlines() if ln.startswith("| link-type-ib | gpu02 | apply |"))
    assert "applied; re-verify passed" in row and "| pass |" in row and "pending" not in row
    assert "LINK\\_TYPE\\_P1=ETH(2)" in row and "appendix A1" in row and '{"' not in row
    appendix = md[md.index("## Appendix") :]
    assert "A1. link-type-ib on gpu02" in appendix and "x" * 300 in appendix
    assert "applied; re-verify passed" in r.html.read_text()


def test_evidence_shows_the_failing_lines(tmp_path: Path, keys: dict) -> None:
    md = export(tmp_path, keys, signoff_snapshot(fixed=False)).markdown.read_text()
    step = md[md.index("link-type-ib — ConnectX") :]
    assert "output from line 18:" in step
    assert "LINK_TYPE_P1                                ETH(2)" in step  # line 20 of 30, not in the first 6
    assert "Device #1 header" not in step


def test_approvals_name_the_commands_as_they_ran(tmp_path: Path, keys: dict) -> None:
    r = export(tmp_path, keys, signoff_snapshot())
    log = json.loads(r.log.read_text())
    approval = next(d for d in log["decisions"] if d["kind"] == "approve")
    assert approval["commands"] == [{"hosts": "gpu02", "command": APPLY_CMD}]
    for text in (r.markdown.read_text(), r.html.read_text()):
        assert "{{" not in text
    assert f"ran on `gpu02`: `{APPLY_CMD}`" in r.markdown.read_text()


def test_criteria_are_shown_with_the_hosts_values(tmp_path: Path, keys: dict) -> None:
    md = export(tmp_path, keys, signoff_snapshot()).markdown.read_text()
    assert "Pass when: version eq 23.10-1.1.9.0" in md
    assert "Pass when: as designed (gpu-inventory): 8 GPUs with PCI id 10de:2330" in md
