"""Where the demo's lab listens, chosen once per demo directory and kept in
DIR/lab-address.json, so every restart of `runbook demo` writes the same
inventory (the same addresses and port), and the run's inventory stays one
version (docs/state-directory.md). Loopback only (127.0.0.0/8)."""

from __future__ import annotations

import ipaddress
import json
import os
from pathlib import Path

from ..sim.procs import random_base

FILE_NAME = "lab-address.json"
# One port on every node address (each node has its own 127.x.y.z): the
# simulator's own default (runbook/sim/main.py).
PORT = 2222


def lab_address(base: Path) -> tuple[str, int]:
    """(base address, port) of this demo directory's lab, chosen on first use."""
    try:
        saved = json.loads((base / FILE_NAME).read_text(encoding="utf-8"))
        address, port = str(saved["base_address"]), int(saved["port"])
        if ipaddress.ip_address(address) in ipaddress.ip_network("127.0.0.0/8") and 0 < port < 65536:
            return address, port
    except (OSError, ValueError, KeyError, TypeError):
        pass  # none yet, or unreadable: choose
    return new_lab_address(base), PORT


def new_lab_address(base: Path) -> str:
    """A new random 127.x.y.0 base (parallel demos do not collide), remembered."""
    address = random_base()
    base.mkdir(parents=True, exist_ok=True)
    tmp = base / (FILE_NAME + ".tmp")
    tmp.write_text(json.dumps({"base_address": address, "port": PORT}) + "\n", encoding="utf-8")
    os.replace(tmp, base / FILE_NAME)
    return address
