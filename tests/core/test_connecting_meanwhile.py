"""workspace/connecting.py: the caller's imports (`meanwhile`) run in their own thread
while another creates the store; either failing leaves no store open (its lock is let
go) and no connection behind. Hosts on a closed loopback port: nothing answers."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from runbook.store.errors import StoreError
from runbook.workspace.connecting import open_connecting
from runbook.workspace.project import load_project
from runbook.workspace.session import Session

REPO = Path(__file__).resolve().parents[2]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def project(tmp_path):
    inv = tmp_path / "inv.yaml"
    inv.write_text(
        "all:\n  hosts:\n    n1:\n      ansible_host: 127.0.0.1\n"
        f"      ansible_port: {_closed_port()}\n      ansible_user: root\n"
    )
    return load_project(REPO / "steps", inv, check=False)


async def test_the_imports_run_beside_the_store_and_the_session_opens(tmp_path, project):
    ran: list[str] = []
    session = await open_connecting(
        project.runbook,
        project.inventory,
        tmp_path / "state",
        ["n1"],
        new=True,
        meanwhile=lambda: ran.append(threading.current_thread().name),
    )
    try:
        assert len(ran) == 1 and ran[0] != threading.main_thread().name
        assert session.store.recorded_definitions()[1].sha256 == project.inventory.sha256
    finally:
        await session.close()


async def test_failing_imports_close_the_store_they_ran_beside(tmp_path, project):
    def broken() -> None:
        raise ImportError("no module named rich")

    with pytest.raises(ImportError, match="rich"):
        await open_connecting(
            project.runbook, project.inventory, tmp_path / "state", ["n1"], new=True, meanwhile=broken
        )
    again = Session.open(project.runbook, project.inventory, tmp_path / "state", new=True)  # lock let go
    await again.close()


async def test_a_store_that_cannot_be_created_is_reported_after_the_imports_end(tmp_path, project):
    (tmp_path / "state").write_text("a file, not a directory")
    ended = threading.Event()
    with pytest.raises((StoreError, OSError)):
        await open_connecting(
            project.runbook,
            project.inventory,
            tmp_path / "state",
            ["n1"],
            new=True,
            meanwhile=ended.set,
        )
    assert ended.is_set()
