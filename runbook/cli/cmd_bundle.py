"""`runbook bundle -o FILE`: one archive for an air-gapped site (docs/site-workflow.md).

The archive holds the runbook wheel and every dependency wheel for one target
Python and platform, an install.sh and a README. On the site:

    tar xzf runbook-bundle.tar.gz && cd runbook-bundle && ./install.sh [VENV]

which runs `pip install --no-index --find-links wheels/ runbook` into a new
virtualenv. Making the bundle needs a package index (the internet or the
site's mirror, through pip's own configuration); installing it needs none.

The runbook wheel is built from the checkout this runbook runs from, or
taken from --wheel (an installed runbook has no source to build from)."""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
from pathlib import Path

from ..errors import EXIT_OK, RunbookError, UsageError

CHECKOUT = Path(__file__).resolve().parents[2]
NAME = "runbook-bundle"

INSTALL_SH = """#!/bin/sh
# Install runbook from the wheels beside this script, with no package index.
#   ./install.sh [VENV]     (default VENV: ./runbook-venv)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
venv=${1:-runbook-venv}
PYTHON=${PYTHON:-python3}
"$PYTHON" -m venv "$venv"
"$venv/bin/python" -m pip install --no-index --find-links "$here/wheels" runbook
echo "installed: $venv/bin/runbook   (try: $venv/bin/runbook demo --headless --nodes 4)"
"""


def eprint(*args) -> None:
    # not workspace.project's: importing it loads the inventory and YAML stack on every
    # `runbook` start, since build_parser imports this module (bench/cold_start.py)
    print(*args, file=sys.stderr)


def add_arguments(p) -> None:
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        default=f"{NAME}.tar.gz",
        help=f"the archive to write (default: {NAME}.tar.gz)",
    )
    p.add_argument(
        "--python-version",
        metavar="X.Y",
        help="Python of the site's machine, e.g. 3.11 (default: this Python)",
    )
    p.add_argument(
        "--platform",
        action="append",
        metavar="TAG",
        help="wheel platform tag of the site's machine, e.g. manylinux_2_28_x86_64 "
        "(repeatable; default: this machine's)",
    )
    p.add_argument(
        "--wheel", metavar="FILE", help="the runbook wheel to bundle (default: build one from this checkout)"
    )


_MANYLINUX = re.compile(r"manylinux_(\d+)_(\d+)_(\w+)$")
_LEGACY = {"manylinux2014": 17, "manylinux2010": 12, "manylinux1": 5}


def expand_platforms(tags: list[str]) -> list[str]:
    """A wheel built for an older glibc installs on a newer one, but `pip download
    --platform manylinux_2_28_x86_64` only takes wheels tagged exactly so: list
    every older manylinux tag too (as pip does for the machine it runs on), or
    cffi (tagged manylinux_2_17) is "not found" for a Rocky 9 target."""
    out: list[str] = []
    for tag in tags:
        glibc = None
        if m := _MANYLINUX.match(tag):
            major, glibc, arch = int(m[1]), int(m[2]), m[3]
        else:
            legacy, _, arch = tag.partition("_")
            if legacy in _LEGACY and arch:
                major, glibc = 2, _LEGACY[legacy]
        if glibc is None or major != 2:
            out.append(tag)
            continue
        for minor in range(glibc, 4, -1):
            out.append(f"manylinux_2_{minor}_{arch}")
            out += [f"{name}_{arch}" for name, v in _LEGACY.items() if v == minor]
    return list(dict.fromkeys(out))


def target_python(args) -> str:
    return args.python_version or f"{sys.version_info.major}.{sys.version_info.minor}"


def build_wheel(dest: Path) -> Path:
    """Build the runbook wheel from the checkout (in a copy: the checkout stays clean)."""
    if not (CHECKOUT / "pyproject.toml").is_file() or not (CHECKOUT / "steps").is_dir():
        raise UsageError(
            "this runbook is installed, not a checkout: pass the runbook wheel with --wheel FILE"
        )
    src = dest / "src"
    src.mkdir()
    for name in ("runbook", "steps", "inventory"):
        shutil.copytree(CHECKOUT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md"):
        shutil.copy2(CHECKOUT / name, src / name)
    out = dest / "built"
    _pip("wheel", "--no-deps", "--wheel-dir", str(out), str(src), what="building the runbook wheel")
    wheels = sorted(out.glob("runbook-*.whl"))
    if not wheels:
        raise RunbookError("pip built no runbook wheel")
    return wheels[0]


def _pip(*args: str, what: str) -> None:
    eprint(f"runbook bundle: {what}")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args], capture_output=True, text=True
    )
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-12:])
        raise RunbookError(f"{what} failed (pip exit {proc.returncode}):\n{tail}")


def cmd_bundle(args) -> int:
    out = Path(args.output)
    pyver = target_python(args)
    with tempfile.TemporaryDirectory(prefix="runbook-bundle-") as tmp:
        tmp = Path(tmp)
        wheel = Path(args.wheel).resolve() if args.wheel else build_wheel(tmp)
        if not wheel.is_file():
            raise UsageError(f"--wheel {args.wheel}: no such file")
        root = tmp / NAME
        wheels = root / "wheels"
        wheels.mkdir(parents=True)
        shutil.copy2(wheel, wheels / wheel.name)
        target = ["--only-binary=:all:", "--python-version", pyver, "--implementation", "cp"]
        for tag in expand_platforms(args.platform or []):
            target += ["--platform", tag]
        _pip(
            "download",
            "--dest",
            str(wheels),
            *target,
            str(wheels / wheel.name),
            what=f"downloading every dependency wheel for Python {pyver}"
            f" on {', '.join(args.platform) if args.platform else sysconfig.get_platform()}",
        )
        (root / "install.sh").write_text(INSTALL_SH)
        (root / "install.sh").chmod(0o755)
        names = sorted(p.name for p in wheels.glob("*.whl"))
        (root / "README.txt").write_text(
            f"runbook for an air-gapped site: {wheel.name} and its dependencies\n"
            f"target: Python {pyver}, platform {', '.join(args.platform) if args.platform else sysconfig.get_platform()}"
            f" (made on {platform.system()} {platform.machine()})\n\n"
            f"install:  ./install.sh [VENV]\n"
            f"or:       python3 -m pip install --no-index --find-links wheels/ runbook\n\n"
            + "".join(f"  {n}\n" for n in names)
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(out, "w:gz") as tar:
            tar.add(root, arcname=NAME)
    eprint(
        f"runbook bundle: {out} ({len(names)} wheels, Python {pyver}); on the site: "
        f"tar xzf {out.name} && {NAME}/install.sh"
    )
    return EXIT_OK
