"""`runbook_known_hosts` is a path or a list of paths (docs/inventory.md); both
reach the host-key check, `~` expanded, each file once."""

from __future__ import annotations

from pathlib import Path

from runbook.inventory.load import load_inventory
from runbook.workspace.connecting import known_hosts_files


def _inventory(tmp_path: Path, value: str) -> Path:
    inv = tmp_path / "hosts.yaml"
    inv.write_text(
        "all:\n"
        "  hosts:\n"
        "    gpu01: {ansible_host: 127.0.0.2}\n"
        f"    gpu02: {{ansible_host: 127.0.0.3, runbook_known_hosts: {value}}}\n"
        f"  vars: {{runbook_known_hosts: {tmp_path}/site_known_hosts}}\n"
    )
    return inv


def test_a_list_of_known_hosts_files_is_read_file_by_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.ssh/known_hosts of the machine
    inv = load_inventory(_inventory(tmp_path, f"[{tmp_path}/a, '~/b', {tmp_path}/a]"))
    assert known_hosts_files(inv) == [
        tmp_path / "site_known_hosts",
        tmp_path / "a",
        tmp_path / "home" / "b",
    ]


def test_a_single_path_still_works(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    inv = load_inventory(_inventory(tmp_path, f"{tmp_path}/one"))
    assert known_hosts_files(inv) == [tmp_path / "site_known_hosts", tmp_path / "one"]
