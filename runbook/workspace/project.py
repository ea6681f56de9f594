"""Loading what every command needs: the runbook, the inventory, lint."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..definition.lint import lint
from ..definition.loader import load_runbook
from ..definition.model import Inventory, Runbook
from ..errors import InputError, Problem
from ..inventory.load import load_inventory

if TYPE_CHECKING:
    from .load_cache import LoadCache


@dataclass
class Project:
    """The loaded runbook and inventory, with the caches still to remember."""

    runbook: Runbook
    inventory: Inventory
    steps_dir: Path
    inventory_path: Path
    # a clean lint and parsed YAML that could not be remembered yet: their state
    # directory did not exist (a site's first run); remember_caches() writes them
    # once the run has made it
    unremembered_lint: tuple[str, tuple[dict, dict]] | None = None
    unwritten_loads: LoadCache | None = None

    def remember_caches(self, state: str | Path) -> None:
        if not Path(state).is_dir():
            return
        if self.unremembered_lint is not None:
            from . import lint_cache

            k, indexes = self.unremembered_lint
            lint_cache.remember_clean(state, k)
            lint_cache.remember_indexes(state, indexes)
            self.unremembered_lint = None
        if self.unwritten_loads is not None:
            self.unwritten_loads.write_pending()
            self.unwritten_loads = None


def load_project(
    steps: str | Path, inventory: str | Path, *, check: bool = True, state: str | Path | None = None
) -> Project:
    """Load both; with `check`, every problem of both (and of their combination)
    is raised at once as FILE:LINE: messages. With `state`, a clean lint of the same
    files is remembered there and not repeated (workspace/lint_cache.py), and so is
    their parsed YAML (workspace/load_cache.py)."""
    problems = []
    runbook = inv = None
    pending: list = []
    if state is not None:
        _use_indexes(state)
    with _yaml_cache(state) as loads:
        try:
            runbook = load_runbook(steps)
        except InputError as exc:
            problems.extend(exc.problems)
        try:
            inv = load_inventory(inventory)
        except InputError as exc:
            problems.extend(exc.problems)
    if runbook is not None and inv is not None and check:
        problems.extend(_lint(runbook, inv, state, pending))
    if problems:
        if not Path(steps).exists() or not Path(inventory).exists():
            problems.append(
                Problem(
                    str(Path.cwd()),
                    None,
                    "this is not a site directory: work in one made by "
                    "`runbook init DIR`, or pass --steps DIR --inventory PATH",
                )
            )
        raise InputError(problems)
    return Project(
        runbook,
        inv,
        Path(steps),
        Path(inventory),
        pending[0] if pending else None,
        loads if loads is not None and loads.pending else None,
    )


def _lint(runbook: Runbook, inv: Inventory, state: str | Path | None, pending: list) -> list[Problem]:
    if state is None:
        return lint(runbook, inv)
    from . import lint_cache

    k = lint_cache.key(runbook, inv)
    if lint_cache.known_clean(state, k):
        return []
    problems = lint(runbook, inv)
    if not problems:
        from .. import parsers
        from ..criteria import design

        indexes = (parsers.index(), design.index())
        if Path(state).is_dir():
            lint_cache.remember_clean(state, k)
            lint_cache.remember_indexes(state, indexes)
        elif k is not None:
            pending.append((k, indexes))
    return problems


@contextmanager
def _yaml_cache(state: str | Path | None):
    """With a state directory: parsed YAML is remembered there (workspace/load_cache.py)."""
    if state is None:
        yield None
        return
    from .. import yamlsafe
    from .load_cache import LoadCache

    yamlsafe.text_cache = cache = LoadCache(state)
    try:
        yield cache
    finally:
        yamlsafe.text_cache = None


def _use_indexes(state: str | Path) -> None:
    """Which module holds which parser and which design comparison, remembered from an
    earlier full discovery of the same source (workspace/lint_cache.py): the steps'
    `parse:` and `design:` names are then checked without importing every module."""
    from .. import parsers
    from ..criteria import design
    from . import lint_cache

    parser_index, design_index = lint_cache.load_indexes(state)
    if parser_index:
        parsers.use_index(parser_index)
    if design_index:
        design.use_index(design_index)


def eprint(*args) -> None:
    print(*args, file=sys.stderr)
