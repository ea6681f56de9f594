"""The HTML report printed to PDF by a headless Chromium, when one is installed
(`chromium --headless --print-to-pdf`). Nothing is fetched: the report is one
self-contained file (inline CSS and SVG), so the print works offline."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from runbook.errors import RunbookError

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
HOW_TO_GET = (
    "no Chromium found to print the PDF: install one (Debian/Ubuntu: apt-get install chromium; "
    "RHEL: dnf install chromium; macOS: Google Chrome) or name it with RUNBOOK_CHROMIUM=/path/to/chrome; "
    "or open NAME.html in a browser and print it"
)
TIMEOUT = 120


class PdfError(RunbookError):
    """The PDF cannot be printed (exit code 2); the log and reports are written."""


def find_chromium() -> str | None:
    explicit = os.environ.get("RUNBOOK_CHROMIUM")
    if explicit:
        return explicit if Path(explicit).is_file() and os.access(explicit, os.X_OK) else None
    return next((p for p in map(shutil.which, CANDIDATES) if p), None)


def print_pdf(html: Path, pdf: Path, chromium: str | None = None) -> Path:
    chromium = chromium or find_chromium()
    if not chromium:
        raise PdfError(HOW_TO_GET)
    html, pdf = Path(html).resolve(), Path(pdf).resolve()
    with tempfile.TemporaryDirectory(prefix="runbook-chromium-") as profile:
        # a throwaway profile: never the user's browser profile, no first-run dialogs
        cmd = [
            chromium,
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--no-pdf-header-footer",
            f"--print-to-pdf={pdf}",
            html.as_uri(),
        ]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PdfError(f"{chromium}: could not print the PDF: {exc}") from None
    if done.returncode != 0 or not pdf.is_file() or pdf.stat().st_size == 0:
        tail = (done.stderr or "").strip().splitlines()[-1:] or [""]
        raise PdfError(f"{chromium} exited {done.returncode} without a PDF: {tail[0]}")
    return pdf
