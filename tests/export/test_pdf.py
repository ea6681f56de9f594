"""`runbook export --pdf`: the report printed by a headless Chromium when one is
installed; without one, the log and reports are written, the message says how
to get one, and the exit code is 2."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from runbook.cli.cmd_signed_log import add_export_arguments, cli_export
from runbook.export.pdf import find_chromium

from .snapshot_builder import small_snapshot


def _export(tmp_path: Path, keys: dict) -> int:
    snap = tmp_path / "snapshot.json"
    snap.write_text(json.dumps(small_snapshot()))
    parser = argparse.ArgumentParser(prog="runbook export")
    add_export_arguments(parser)
    args = parser.parse_args(
        [
            "--snapshot",
            str(snap),
            "--sign-key",
            str(keys["ed25519"]),
            "-o",
            str(tmp_path / "acme.json"),
            "--identity",
            "jdoe@integrator.example",
            "--pdf",
        ]
    )
    return cli_export(args)


def test_without_chromium_it_says_how_to_get_one(
    tmp_path: Path, keys: dict, monkeypatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("RUNBOOK_CHROMIUM", str(tmp_path / "no-such-chromium"))
    assert find_chromium() is None
    assert _export(tmp_path, keys) == 2
    err = capsys.readouterr().err
    assert "no Chromium found" in err and "apt-get install chromium" in err and "RUNBOOK_CHROMIUM" in err
    assert {p.name for p in tmp_path.iterdir()} >= {"acme.json", "acme.json.sig", "acme.md", "acme.html"}
    assert not (tmp_path / "acme.pdf").exists()


def test_the_report_prints_to_pdf_in_a_real_browser(tmp_path: Path, keys: dict, capsys) -> None:
    chromium = find_chromium()
    if chromium is None:
        pytest.skip(
            "no Chromium installed (apt-get install chromium, or RUNBOOK_CHROMIUM=/path): "
            "the PDF print is not exercised on this machine"
        )
    if shutil.which("pdftotext") is None or shutil.which("pdfinfo") is None:
        pytest.skip(
            "poppler-utils (pdftotext, pdfinfo) not installed: the PDF's pages and text cannot be read"
        )
    assert _export(tmp_path, keys) == 0, capsys.readouterr().err
    pdf = tmp_path / "acme.pdf"
    assert pdf.read_bytes().startswith(b"%PDF-")
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, timeout=30).stdout
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))
    assert pages >= 2  # the sign-off, the matrix and the steps do not fit one page
    text = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, timeout=30
    ).stdout
    for expected in (
        "Completion report — seed-dc",
        "Overall verdict:",
        "Sign-off",
        "jdoe@integrator.example",
    ):
        assert expected in text, expected
