"""`runbook init DIR`: a new site directory (docs/site-workflow.md).

It holds an inventory template with every design variable described, a copy
of the shipped steps, a short README and a .gitignore for state/, so each
site's runbook is versioned by its engineer. Nothing that exists is
overwritten."""

from __future__ import annotations

import shutil
from pathlib import Path

from ..errors import EXIT_OK, UsageError
from ..shipped import steps_dir
from ..workspace.project import eprint

KIT = Path(__file__).resolve().parents[1] / "sitekit"
# what lands where: (file of the kit, path in the site directory)
FILES = (("inventory.yaml", "inventory/site.yaml"), ("README.md", "README.md"), ("gitignore", ".gitignore"))


def cmd_init(args) -> int:
    site = Path(args.dir)
    taken = [p for p in ("steps", "inventory", "README.md", ".gitignore", "state") if (site / p).exists()]
    if taken:
        raise UsageError(
            f"{site} already has {', '.join(taken)}: runbook init only creates a new site "
            f"directory (choose another DIR, or move those away)"
        )
    if site.exists() and not site.is_dir():
        raise UsageError(f"{site} exists and is not a directory")
    site.mkdir(parents=True, exist_ok=True)
    shutil.copytree(steps_dir(), site / "steps", ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"))
    for src, dst in FILES:
        target = site / dst
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(KIT / src, target)
    n = len(list((site / "steps").glob("*.yaml")))
    eprint(f"runbook init: {site}/ with steps/ ({n} phase files), inventory/site.yaml, README.md, .gitignore")
    eprint(
        f"next: edit {site / 'inventory' / 'site.yaml'} (every value is the example site's), "
        f"then `cd {site} && runbook lint`"
    )
    return EXIT_OK
