"""Which addresses a `runbook run` dialled first, remembered under the state directory
(STATE/dial-plans/), so that the next run with the same arguments and the same files
starts those TCP connects before it has even loaded its steps and inventory.

transport/predial.py starts the first step's connects once the project is loaded (the
steps, the inventory, lint: ~0.1 s at 48 hosts); with a plan they start right after
the command line is read. The plan is only a guess that saves time: after the load,
the run works out its first hosts as before, keeps the early sockets to addresses it
still wants, closes the others and dials what is missing (PreDialed.want), and a socket
is only ever taken by a connection to its own address and port. A stale plan costs
a connect that is closed unused, never a different verdict.

A plan is keyed by the command's choices (steps, phase, hosts, action, handshake limit),
the paths of the steps and of the inventory, and the size, modification time and inode
of every file under them (what Python's own bytecode cache trusts): an edited file is
another key. It is read only as the other caches are (runbook/owned_files.py).
This module imports only the standard library: it runs before anything else is
imported."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..owned_files import read_keyed, write_json

DIR_NAME = "dial-plans"
_MAX_FILES = 2000  # a steps or inventory tree larger than this is not worth the walk
_KEPT = 32  # plans kept: the oldest go when there are more (one per distinct command)


def _stats(root: Path, out: list) -> bool:
    """(path, size, mtime, inode) of every file under `root`; False when it is too big."""
    try:
        st = os.stat(root)
    except OSError:
        out.append((str(root), None))
        return True
    out.append((str(root), st.st_size, st.st_mtime_ns, st.st_ino))
    if not os.path.isdir(root):
        return True
    stack = [str(root)]
    while stack:
        try:
            entries = sorted(os.scandir(stack.pop()), key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            try:
                st = e.stat()
            except OSError:
                continue
            out.append((e.path, st.st_size, st.st_mtime_ns, st.st_ino))
            if len(out) > _MAX_FILES:
                return False
            if e.is_dir():
                stack.append(e.path)
    return True


def plan_key(args) -> str | None:
    """The key of `args` (a `runbook run`'s parsed command line), or None when the
    files are too many to walk."""
    files: list = []
    for root in (args.steps, args.inventory):
        if not _stats(Path(os.path.abspath(root)), files):
            return None
    choices = [args.step, args.phase, args.all, args.hosts, args.action, args.max_handshakes]
    blob = json.dumps([choices, files], default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def recall(state: str | Path, key: str | None) -> list[tuple[str, int]]:
    """The addresses remembered for `key`, in dial order; [] when none is trusted."""
    record = read_keyed(Path(state) / DIR_NAME / key, key) if key is not None else None
    if record is None:
        return []
    addresses = record.get("addresses")
    if not isinstance(addresses, list):
        return []
    plan = []
    for a in addresses:
        if not (isinstance(a, list) and len(a) == 2 and isinstance(a[0], str) and type(a[1]) is int):
            return []
        plan.append((a[0], a[1]))
    return plan


def remember(state: str | Path, key: str | None, addresses: list[tuple[str, int]]) -> None:
    """Keep `addresses` for `key` in an existing state directory; a cache: what is not
    written is simply worked out again next time."""
    if key is None or not Path(state).is_dir():
        return
    d = Path(state) / DIR_NAME
    write_json(d / key, {"key": key, "addresses": [list(a) for a in addresses]})
    try:
        _prune(d)
    except OSError:
        pass


def _prune(d: Path) -> None:
    plans = [e for e in os.scandir(d) if e.is_file(follow_symlinks=False) and not e.name.startswith(".")]
    if len(plans) > _KEPT:
        plans.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime_ns)
        for e in plans[: len(plans) - _KEPT]:
            os.unlink(e.path)
