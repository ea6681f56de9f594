"""Loading what every command needs: the runbook, the inventory, lint."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, Problem
from ..inventory.load import load_inventory
from ..definition.lint import lint
from ..definition.loader import load_runbook
from ..definition.model import Inventory, Runbook


@dataclass
class Project:
    runbook: Runbook
    inventory: Inventory
    steps_dir: Path
    inventory_path: Path


def load_project(steps: str | Path, inventory: str | Path, *, check: bool = True) -> Project:
    """Load both; with `check`, every problem of both (and of their combination)
    is raised at once as FILE:LINE: messages."""
    problems = []
    runbook = inv = None
    try:
        runbook = load_runbook(steps)
    except InputError as exc:
        problems.extend(exc.problems)
    try:
        inv = load_inventory(inventory)
    except InputError as exc:
        problems.extend(exc.problems)
    if runbook is not None and inv is not None and check:
        problems.extend(lint(runbook, inv))
    if problems:
        if not Path(steps).exists() or not Path(inventory).exists():
            problems.append(Problem(str(Path.cwd()), None, "this is not a site directory: work in one made by "
                                    "`runbook init DIR`, or pass --steps DIR --inventory PATH"))
        raise InputError(problems)
    return Project(runbook, inv, Path(steps), Path(inventory))


def eprint(*args) -> None:
    print(*args, file=sys.stderr)
