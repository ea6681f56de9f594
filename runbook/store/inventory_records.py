"""The inventory record an earlier run of the same state directory wrote, found
again instead of made again (STATE/definitions-cache/; RunDefinitions in
definitions.py asks it before it serialises the inventory)."""

from __future__ import annotations

import marshal
import os
import re
from pathlib import Path

from ..code_fingerprint import fingerprint
from ..definition.model import Inventory
from ..owned_files import trusted_file
from .definitions import latest_object_dirs, sha256_hex
from .errors import StoreError
from .nofollow import DIR_MODE, open_fd


class InventoryRecords:
    """The inventory object an earlier run of the same state directory recorded, found
    again instead of made again: a new run of the same inventory would serialise every
    host's merged vars once more (~0.3 s of CPU at 1,000 hosts, while the first
    handshakes wait for the GIL; bench/cold_phases.py).

    STATE/definitions-cache/<key> holds the object's name, the key a hash of all the
    record is made of (the loaded inventory's SHA-256, sources, hosts, groups and vars, in
    `marshal`'s exact form: ~20 ms at 1,000 hosts) and of the fingerprint of the code
    that makes it (_CODE; runbook/code_fingerprint.py): the same values through the same
    code give the same bytes. The bytes are
    then read from a run that has the object, and used only when they hash to its name;
    the new run keeps its own file as ever (RunDefinitions._put: a link to that run's file). Anything amiss (no such file, a link, a file
    another user could have written, a damaged object, a value marshal cannot write) is
    a miss: the record is made as before."""

    DIR_NAME = "definitions-cache"
    _RUNS_LOOKED_AT = 8  # the latest runs: the one before this is almost always the donor

    def __init__(self, state_dir: Path):
        self.state_dir = state_dir
        self.dir = state_dir / self.DIR_NAME

    @staticmethod
    def key(inventory: Inventory) -> str | None:
        """What the inventory record is made of, hashed with the code that makes it; None
        when a value has no exact `marshal` form."""
        try:
            data = marshal.dumps(
                (
                    inventory.sha256,  # the record names it
                    list(inventory.sources),
                    [(h.name, h.vars, list(h.groups)) for h in inventory.hosts.values()],
                    [(g.name, list(g.hosts), list(g.children), g.vars) for g in inventory.groups.values()],
                ),
                2,  # no back-references: equal values, equal bytes
            )
        except ValueError:
            return None
        code = fingerprint(_CODE)
        return None if code is None else sha256_hex(f"{code}\0{sha256_hex(data)}".encode())

    def find(self, key: str | None) -> bytes | None:
        if key is None:
            return None
        name = trusted_file(self.dir / key)
        if name is None or not re.fullmatch(rb"[0-9a-f]{64}", name):
            return None
        for objects in latest_object_dirs(self.state_dir, self._RUNS_LOOKED_AT):
            data = trusted_file(objects / f"{name.decode()}.json")
            if data is not None and sha256_hex(data).encode() == name:
                return data
        return None

    def remember(self, key: str | None, name: str) -> None:
        if key is None:
            return
        try:
            self.dir.mkdir(mode=DIR_MODE, exist_ok=True)
            path = self.dir / key
            tmp = self.dir / f".tmp-{os.getpid()}-{path.name[:16]}"
            with os.fdopen(open_fd(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "wb") as f:
                f.write(name.encode())
            os.replace(tmp, path)
        except (OSError, StoreError):
            pass  # a cache: the next run makes the record itself


# What the inventory record's bytes depend on besides the inventory files: definitions.py,
# the canonical form, the inventory's loading (merged vars, secrets) and its model.
_CODE = ("store/definitions.py", "store/canonical.py", "inventory", "definition/model.py")
