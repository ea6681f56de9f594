"""What a run ran with: its step definitions and its inventory, kept in the
run's own directory so the state stands on its own (export, status and
verify-log need no steps/ or inventory/ beside it). Layout and formats:
docs/state-directory.md.

    <run>/definitions/objects/<sha256>.json   content-addressed: the name is the
                                              SHA-256 of the file's bytes
    <run>/definitions/versions.jsonl          one line per session whose runbook or
                                              inventory differs from the line before

Three kinds of object:
- a step definition: exactly the bytes `Step.sha256` hashes (the step as
  written, JSON with sorted keys), so its name is the step's hash that
  StepStarted records;
- a runbook: {"kind": "runbook", "sha256": Runbook.sha256, "phases": [...]}
  naming each step's object, in order;
- an inventory: {"kind": "inventory", "sha256": Inventory.sha256, "sources",
  "hosts": [...], "groups": [...]}, resolved (merged vars, group members), with
  secret-looking vars left out (SECRET_NAME).

Objects are durable (file fsync, rename, directory fsync) before the versions
line that names them, and both before the session runs anything, so every
step hash or inventory hash the journal records has its object here. An object
an earlier run of the state directory holds with the same bytes is a hard link
to that file (made durable when that run wrote it), not written again.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..definition.model import Group, Host, Inventory, Phase, Runbook, Step
from ..inventory.secrets import is_secret_name, is_secret_value
from ..owned_files import ours, trusted_file
from .canonical import CanonicalError, canonical_bytes
from .errors import StoreCorrupt, StoreError
from .nofollow import DIR_MODE, open_fd
from .runs import JOURNAL_NAME
from .storage import fsync_dir

DIR_NAME = "definitions"
OBJECTS = "objects"
VERSIONS = "versions.jsonl"
# Objects written at once by a new run (_put).
_PUT_THREADS = 16
# The store's rule for vars kept out of anything written about a run (the
# same as runbook/store/snapshot.py's): matched on the var name, at any depth.
SECRET_NAME = re.compile(r"pass|secret|token|private_key|credential", re.IGNORECASE)


def definition_bytes(definition: dict) -> bytes:
    """The bytes Step.sha256 hashes (runbook/definition/model.py)."""
    return json.dumps(definition, sort_keys=True, separators=(",", ":"), default=str).encode()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@lru_cache(maxsize=4096)  # the same variable names on every host of the inventory
def _secret_key(name: str) -> bool:
    return bool(SECRET_NAME.search(name)) or is_secret_name(name)


def without_secrets(value: Any) -> Any:
    """A JSON-able copy with secret-looking keys left out (dates and other
    objects as text, as the journal keeps them)."""
    if isinstance(value, dict):
        return {
            str(k): without_secrets(v)
            for k, v in value.items()
            if not _secret_key(str(k)) and not is_secret_value(v)
        }
    if isinstance(value, (list, tuple)):
        return [without_secrets(v) for v in value]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def runbook_record(runbook: Runbook) -> dict[str, Any]:
    return {
        "kind": "runbook",
        "sha256": runbook.sha256,
        "phases": [
            {
                "name": p.name,
                "title": p.title,
                "file": p.file,
                "steps": [{"id": s.id, "sha256": s.sha256, "file": s.file, "line": s.line} for s in p.steps],
            }
            for p in runbook.phases
        ],
    }


def inventory_record(inventory: Inventory) -> dict[str, Any]:
    # Lists, not objects keyed by name: canonical JSON sorts keys, and host
    # order is inventory order (targets come out in it).
    return {
        "kind": "inventory",
        "sha256": inventory.sha256,
        "sources": list(inventory.sources),
        "hosts": [
            {"name": h.name, "vars": without_secrets(h.vars), "groups": list(h.groups)}
            for h in inventory.hosts.values()
        ],
        "groups": [
            {
                "name": g.name,
                "hosts": list(g.hosts),
                "children": list(g.children),
                "vars": without_secrets(g.vars),
            }
            for g in inventory.groups.values()
        ],
    }


@dataclass(frozen=True)
class Version:
    """One line of versions.jsonl: what a session of the run was loaded with."""

    time: float
    runbook: str  # object name of the runbook record
    inventory: str  # object name of the inventory record
    runbook_sha256: str  # Runbook.sha256 (RunStarted.runbook_sha256)
    inventory_sha256: str  # Inventory.sha256 (RunStarted/StepStarted.inventory_sha256)

    def to_dict(self) -> dict[str, Any]:
        return {
            "time": self.time,
            "runbook": self.runbook,
            "inventory": self.inventory,
            "runbook_sha256": self.runbook_sha256,
            "inventory_sha256": self.inventory_sha256,
        }


class RunDefinitions:
    """The definitions record of one run directory."""

    def __init__(self, run_dir: str | Path):
        self.directory = Path(run_dir) / DIR_NAME
        self.objects = self.directory / OBJECTS
        self.versions_path = self.directory / VERSIONS
        self._cache: dict[str, Any] = {}

    # --- writing -------------------------------------------------------
    def record(self, runbook: Runbook, inventory: Inventory, now: float | None = None) -> bool:
        """Keep what this session runs with; True when it differs from the run's
        latest version (a new versions line), False when it is the same."""
        last = self.latest()
        if (
            last
            and runbook.sha256
            and inventory.sha256
            and (last.runbook_sha256, last.inventory_sha256) == (runbook.sha256, inventory.sha256)
            and self.has_object(last.runbook)
            and self.has_object(last.inventory)
        ):
            # The same source files (both hashes cover every byte read): the same
            # record. Saves serialising a thousand hosts on every reopening.
            return False
        objects: dict[str, bytes] = {}
        for step in runbook.steps:
            data = definition_bytes(step.definition)
            if sha256_hex(data) != step.sha256:  # the loader and this file must agree
                raise StoreError(f"step {step.id}: its definition does not hash to its sha256")
            objects[step.sha256] = data
        from .inventory_records import InventoryRecords  # it reads this module's names

        recorded = InventoryRecords(self.directory.parent.parent)
        inventory_key = recorded.key(inventory)
        try:
            manifest = canonical_bytes(runbook_record(runbook))
            inv = recorded.find(inventory_key)
            if inv is None:
                inv = canonical_bytes(inventory_record(inventory))
        except CanonicalError as exc:
            raise StoreError(f"{self.directory}: cannot record the definitions: {exc}") from None
        version = Version(
            time.time() if now is None else now,
            sha256_hex(manifest),
            sha256_hex(inv),
            runbook.sha256,
            inventory.sha256,
        )
        objects[version.runbook] = manifest
        objects[version.inventory] = inv
        if last and (last.runbook, last.inventory) == (version.runbook, version.inventory):
            return False
        try:
            self._put(objects)
            self._append(version)
        except OSError as exc:
            raise StoreError(
                f"{exc.filename or self.directory}: cannot record the definitions: {exc.strerror or exc}"
            ) from None
        recorded.remember(inventory_key, version.inventory)
        return True

    def _put(self, objects: dict[str, bytes]) -> None:
        new = {n: d for n, d in objects.items() if not (self.objects / f"{n}.json").is_file()}
        if not new:
            return
        self.directory.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        self.objects.mkdir(mode=DIR_MODE, exist_ok=True)
        new = self._link_from_earlier_runs(new)
        if len(new) == 1:
            self._put_one(*next(iter(new.items())))
        elif new:
            # A new run writes every step of the runbook (~60 files): one fsync after
            # another costs ~3 ms each on a busy disk, ~0.2 s in all before the first
            # command; at once, the file system commits them together (os.fsync lets go
            # of the GIL). Each file is still durable before its rename, and both
            # directories after all of them.
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=min(_PUT_THREADS, len(new))) as pool:
                for _ in pool.map(lambda item: self._put_one(*item), new.items()):
                    pass
        fsync_dir(self.objects)
        fsync_dir(self.directory)

    def _link_from_earlier_runs(self, new: dict[str, bytes]) -> dict[str, bytes]:
        """The objects an earlier run of the same state directory holds with exactly
        these bytes are linked into this run (a hard link: the same file, already made
        durable before the rename that gave it its name), not written and fsynced once
        more: a new run of the same runbook would otherwise write ~60 files again, the
        slowest part of creating a run (bench/cold_phases.py). An object is linked
        only when the earlier run's file is this user's, not a link, not writable by
        others, and its bytes are the ones to record; what is not linked (no earlier
        run, another file system, anything amiss) is returned, to be written."""
        earlier = _earlier_object_dirs(self.directory.parent)
        if not earlier:
            return new
        rest = {}
        for name, data in new.items():
            if not any(self._link_one(d / f"{name}.json", name, data) for d in earlier):
                rest[name] = data
        return rest

    def _link_one(self, source: Path, name: str, data: bytes) -> bool:
        if trusted_file(source) != data:  # (also: missing, a link, not ours)
            return False
        try:
            os.link(source, self.objects / f"{name}.json", follow_symlinks=False)
        except FileExistsError:
            return (self.objects / f"{name}.json").is_file()
        except OSError:
            return False
        return True

    def _put_one(self, name: str, data: bytes) -> None:
        tmp = self.objects / f".tmp-{name}-{os.getpid()}"
        with os.fdopen(open_fd(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.objects / f"{name}.json")

    def _append(self, version: Version) -> None:
        new_file = not self.versions_path.exists()
        if not new_file:  # an incomplete last line (a crash while writing it) goes first
            data = self.versions_path.read_bytes()
            if data and not data.endswith(b"\n"):
                os.truncate(self.versions_path, data.rfind(b"\n") + 1)
        line = json.dumps(version.to_dict(), sort_keys=True) + "\n"
        fd = open_fd(self.versions_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)  # 0600, no link
        try:
            os.write(fd, line.encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        if new_file:
            fsync_dir(self.directory)

    # --- reading -------------------------------------------------------
    def exists(self) -> bool:
        return self.versions_path.is_file()

    def versions(self) -> list[Version]:
        """Every version, oldest first (an incomplete last line, never
        acknowledged, is ignored)."""
        try:
            raw = self.versions_path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StoreCorrupt(self.versions_path, f"cannot read: {exc.strerror}") from None
        out = []
        lines = raw.split(b"\n")
        for n, line in enumerate(lines[:-1], 1):  # the last piece has no newline: torn or empty
            try:
                d = json.loads(line)
                out.append(
                    Version(
                        float(d["time"]),
                        str(d["runbook"]),
                        str(d["inventory"]),
                        str(d["runbook_sha256"]),
                        str(d["inventory_sha256"]),
                    )
                )
            except (ValueError, KeyError, TypeError):
                raise StoreCorrupt(self.versions_path, "not a definitions version line", n) from None
        return out

    def latest(self) -> Version | None:
        versions = self.versions()
        return versions[-1] if versions else None

    def object_bytes(self, name: str) -> bytes:
        """An object's bytes, checked against its name."""
        path = self.objects / f"{name}.json"
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise StoreCorrupt(
                path,
                "definition object missing: the run's definitions/ directory was damaged or partly copied",
            ) from None
        except OSError as exc:
            raise StoreCorrupt(path, f"cannot read: {exc.strerror}") from None
        if sha256_hex(data) != name:
            raise StoreCorrupt(
                path, "definition object does not match its SHA-256 name: it was changed or damaged"
            )
        return data

    def object(self, name: str) -> Any:
        if name not in self._cache:
            try:
                self._cache[name] = json.loads(self.object_bytes(name))
            except ValueError:
                raise StoreCorrupt(self.objects / f"{name}.json", "not JSON") from None
        return self._cache[name]

    def has_object(self, name: str) -> bool:
        return (self.objects / f"{name}.json").is_file()

    def step_definition(self, sha256: str) -> dict | None:
        """The definition of one step version (None when this run never recorded it)."""
        return self.object(sha256) if self.has_object(sha256) else None

    def inventory_object(self, inventory_sha256: str) -> dict | None:
        """The latest recorded inventory whose Inventory.sha256 is this one."""
        for v in reversed(self.versions()):
            if v.inventory_sha256 == inventory_sha256:
                return self.object(v.inventory)
        return None

    def current(self) -> tuple[Runbook, Inventory] | None:
        """The runbook and inventory of the run's latest version, rebuilt from
        the objects (None when the run recorded none)."""
        last = self.latest()
        if last is None:
            return None
        return self.runbook(last.runbook), inventory_from_record(self.object(last.inventory))

    def runbook(self, name: str) -> Runbook:
        from ..definition.loader import step_from_definition

        record = self.object(name)
        phases = []
        for p in record.get("phases", []):
            steps: list[Step] = []
            for ref in p.get("steps", []):
                definition = self.object(ref["sha256"])
                # Problems (say, a parser this runbook version no longer has) do not
                # stop status or export: they read the step, they do not run it.
                step, _problems = step_from_definition(
                    definition, p.get("title", ""), ref.get("file", ""), ref.get("line", 0)
                )
                if step is None or step.sha256 != ref["sha256"]:
                    raise StoreCorrupt(
                        self.objects / f"{ref['sha256']}.json",
                        f"step {ref.get('id')}: the recorded definition does not "
                        "rebuild to the step that was recorded",
                    )
                steps.append(step)
            phases.append(
                Phase(name=p["name"], title=p.get("title", ""), file=p.get("file", ""), steps=tuple(steps))
            )
        return Runbook(phases=tuple(phases), sha256=record.get("sha256", ""))


# The latest runs only: the run before this one is almost always the one that has them.
_EARLIER_RUNS_LOOKED_AT = 3


def _earlier_object_dirs(run_dir: Path) -> list[Path]:
    return latest_object_dirs(run_dir.parent, _EARLIER_RUNS_LOOKED_AT, besides=run_dir.name)


def latest_object_dirs(state_dir: Path, limit: int, besides: str | None = None) -> list[Path]:
    """The definitions/objects/ directories of the latest `limit` runs (directories with
    a journal) of the state directory that have one of this user's, private (latest
    first: run ids begin with their start time; sorted by name only, as a state
    directory keeps many runs)."""
    try:
        names = sorted(os.listdir(state_dir), reverse=True)
    except OSError:
        return []
    out = []
    for name in names:
        if name == besides or name.startswith("."):
            continue
        objects = state_dir / name / DIR_NAME / OBJECTS
        try:
            if ours(os.lstat(objects), directory=True) and os.path.isfile(state_dir / name / JOURNAL_NAME):
                out.append(objects)
        except OSError:
            continue
        if len(out) == limit:
            break
    return out


def inventory_from_record(record: dict) -> Inventory:
    hosts = {
        h["name"]: Host(name=h["name"], vars=dict(h.get("vars") or {}), groups=list(h.get("groups") or []))
        for h in record.get("hosts", [])
    }
    groups = {
        g["name"]: Group(
            name=g["name"],
            hosts=list(g.get("hosts") or []),
            children=list(g.get("children") or []),
            vars=dict(g.get("vars") or {}),
        )
        for g in record.get("groups", [])
    }
    return Inventory(
        hosts=hosts,
        groups=groups,
        sources=list(record.get("sources") or []),
        sha256=str(record.get("sha256", "")),
    )
