"""Fixtures for the TUI tests: a store filled with a fixed run (snapshots, resume)
and, for the Pilot tests that run commands, the simulated lab on loopback."""

from __future__ import annotations

from pathlib import Path

import pytest

from runbook.store.store import Store
from runbook.workspace.session import Session

from .events_fixture import DATA, fixed_events, fixed_project


def fill_store(state_dir: Path, project, events) -> None:
    first = events[0]
    store = Store.create(
        state_dir,
        first.run_id,
        site=first.site,
        operator=first.operator,
        tool_version=first.tool_version,
        inventory_sha256=first.inventory_sha256,
        runbook_sha256=first.runbook_sha256,
    )
    try:
        store.append_many(events[1:])
    finally:
        store.close()


@pytest.fixture
def project():
    return fixed_project()


@pytest.fixture
def fixed_state(tmp_path, project) -> Path:
    """A state directory holding one run with fixed events (three hosts left running)."""
    state = tmp_path / "state"
    fill_store(state, project, fixed_events(project))
    return state


@pytest.fixture
def fixed_session(fixed_state, project):
    session = Session.open(project.runbook, project.inventory, fixed_state, operator="alice")
    yield session
    session.store.close()  # nothing was connected: the transport has nothing to close


def sim_project(inventory: Path):
    """A small runbook in the lab's terms (tests/tui/data/lab-steps) on the lab's
    inventory: the TUI's tests do not move when the shipped steps do."""
    from runbook.workspace.project import load_project

    return load_project(DATA / "lab-steps", inventory)


async def start_lab(directory: Path, scenario: str, slow_seconds: float = 1.0):
    from runbook.sim.lab import Lab

    return await Lab.start(
        directory,
        nodes=8,
        scenario=DATA / scenario,
        reboot_seconds=0.2,
        slow_seconds=slow_seconds,
        fresh=True,
        save_state=False,
    )


@pytest.fixture
async def lab(tmp_path):
    """The simulated lab on loopback (8 compute + 2 SM nodes), stopped after the test."""
    lab = await start_lab(tmp_path / "lab", "scenario.yaml")
    try:
        yield lab
    finally:
        await lab.stop()


def open_session(lab, state_dir: Path, **kw) -> Session:
    project = sim_project(lab.inventory)
    return Session.open(
        project.runbook, project.inventory, state_dir, operator="tester", stream_output=True, **kw
    )
