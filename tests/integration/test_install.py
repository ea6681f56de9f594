"""Install anywhere (issue 17): a built wheel, not the checkout, runs the demo
in an empty directory and makes a site directory that lints. The wheel carries
the shipped steps and the example inventory (runbook/_shipped/)."""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("runbook", "steps", "inventory", "pyproject.toml", "setup.py", "MANIFEST.in", "README.md")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """`pip wheel --no-deps` on a copy of the checkout (an in-tree build leaves build/ behind)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(REPO / name, src / name)
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--disable-pip-version-check",
            "--wheel-dir",
            str(tmp / "dist"),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    (built,) = (tmp / "dist").glob("runbook-*.whl")
    return built


def test_the_wheel_carries_the_shipped_runbook_and_inventory(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for folder in ("steps", "inventory"):
            for f in sorted((REPO / folder).glob("*.yaml")):
                inside = f"runbook/_shipped/{folder}/{f.name}"
                assert inside in names, inside
                assert z.read(inside) == f.read_bytes()
        for kit in ("inventory.yaml", "README.md", "gitignore"):
            assert f"runbook/sitekit/{kit}" in names
        assert "runbook/sim/scenarios/default.yaml" in names
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        requires = [ln for ln in z.read(meta).decode().splitlines() if ln.startswith("Requires-Dist:")]
        assert not any(" jc" in r for r in requires)  # declared and never imported: dropped


@pytest.mark.slow
def test_the_installed_wheel_runs_the_demo_and_inits_a_site_from_an_empty_directory(wheel, tmp_path):
    venv = tmp_path / "venv"
    # the dependencies come from this interpreter's site-packages; runbook itself only from the wheel
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
        check=True,
        timeout=120,
    )
    py = venv / "bin" / "python"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(py),
            "install",
            "--no-deps",
            "--no-index",
            "--force-reinstall",
            "--disable-pip-version-check",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["RUNBOOK_OPERATOR"] = "tester"
    where = subprocess.run(
        [str(py), "-c", "import runbook.shipped as s; print(s.steps_dir())"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert where.stdout.strip() == str(
        next(venv.glob("lib/python*/site-packages")) / "runbook/_shipped/steps"
    )

    empty = tmp_path / "empty"
    empty.mkdir()
    runbook = str(venv / "bin" / "runbook")
    demo = subprocess.run(
        [runbook, "demo", "--headless", "--nodes", "3"],
        capture_output=True,
        text=True,
        env=env,
        cwd=empty,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert demo.returncode in (0, 1, 3), demo.stderr[-3000:]
    assert "Traceback" not in demo.stderr and "no such steps directory" not in demo.stderr
    assert f"the run's verdict exit code is {demo.returncode}" in demo.stderr
    assert (empty / "state" / "demo" / "completion-log.json.sig").is_file()

    init = subprocess.run(
        [runbook, "init", "site"], capture_output=True, text=True, env=env, cwd=empty, timeout=60
    )
    assert init.returncode == 0, init.stderr
    lint = subprocess.run(
        [runbook, "lint"], capture_output=True, text=True, env=env, cwd=empty / "site", timeout=60
    )
    assert lint.returncode == 0, lint.stderr
    assert lint.stderr.startswith("ok: ")
