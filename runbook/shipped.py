"""Where the shipped runbook (`steps/`) and the example inventory (`inventory/`)
are, in a checkout and in an installed wheel alike.

The repository's top-level `steps/` and `inventory/` folders are the source;
a built wheel carries a copy of both under `runbook/_shipped/` (setup.py copies
them at build time), so `runbook demo` and `runbook init` work from any
directory after `pip install` or `pipx install` (docs/site-workflow.md)."""

from __future__ import annotations

from pathlib import Path

from .errors import RunbookError

PACKAGE = Path(__file__).resolve().parent
SHIPPED_NAMES = ("steps", "inventory")


def shipped_dir(name: str) -> Path:
    """The shipped `steps` or `inventory` folder: the wheel's copy, else the checkout's."""
    if name not in SHIPPED_NAMES:
        raise ValueError(f"nothing shipped under {name!r}")
    inside = PACKAGE / "_shipped" / name
    if inside.is_dir():
        return inside
    checkout = PACKAGE.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / name).is_dir():
        return checkout / name  # a checkout or an editable install
    raise RunbookError(
        f"this installation of runbook has no shipped {name}/ "
        f"(looked in {inside} and {checkout / name}); reinstall it from a built wheel"
    )


def steps_dir() -> Path:
    return shipped_dir("steps")


def inventory_dir() -> Path:
    return shipped_dir("inventory")
