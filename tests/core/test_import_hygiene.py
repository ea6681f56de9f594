"""The core never needs textual: import every core module in a fresh interpreter."""

import pkgutil
import subprocess
import sys

import runbook


def core_modules():
    for info in pkgutil.walk_packages(runbook.__path__, "runbook."):
        if info.name.startswith("runbook.tui") or info.name.endswith("__main__"):
            continue
        yield info.name


def test_core_imports_without_textual():
    mods = sorted(core_modules())
    assert "runbook.engine.runner" in mods and "runbook.cli.main" in mods
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in mods)
        + "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"textual imported by the core: {out.stdout}"
