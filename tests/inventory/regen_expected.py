#!/usr/bin/env python3
"""Regenerate tests/inventory/data/expected/ from ansible-core itself.

    python tests/inventory/regen_expected.py

Writes, for every case in cases.py, what `ansible-inventory -i PATH --list`
and `--host NAME` print, byte for byte. Run it only when a case changes, and
review the diff: these files are the reference the tests hold runbook to.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cases import (
    CASES,
    EXPECTED,
    SOURCES_DIGESTS,
    ansible_inventory_cmd,
    host_fixture,
    list_fixture,
    run_concurrently,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from runbook.inventory.load import load_inventory


def main() -> int:
    version = subprocess.run(["ansible-inventory", "--version"], capture_output=True, text=True).stdout
    print(version.splitlines()[0] if version else "ansible-inventory: version unknown")
    EXPECTED.mkdir(parents=True, exist_ok=True)
    digests = {}
    with tempfile.TemporaryDirectory() as home:
        for case, (path, hosts) in CASES.items():
            commands = [ansible_inventory_cmd(path, "--list")]
            commands += [ansible_inventory_cmd(path, "--host", host) for host in hosts]
            outputs = run_concurrently(commands, home)
            list_fixture(case).write_text(outputs[0], encoding="utf-8")
            for host, text in zip(hosts, outputs[1:]):
                host_fixture(case, host).write_text(text, encoding="utf-8")
            digests[case] = load_inventory(path).sha256
            print(f"{case}: --list and {len(hosts)} --host")
    SOURCES_DIGESTS.write_text(json.dumps(digests, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
