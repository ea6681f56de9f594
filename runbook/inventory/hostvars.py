"""`group_vars/` and `host_vars/` beside an inventory, and the variable
precedence that ansible-core applies to a host.

Files (ansible's host_group_vars vars plugin + DataLoader.find_vars_files):
for a group or host NAME, the first of `NAME`, `NAME.yml`, `NAME.yaml`,
`NAME.json` that exists in `<dir>/group_vars/` (or `host_vars/`) is used; if
it is a directory, every file below it with one of those extensions or none,
in sorted order, hidden files and `~` backups skipped. `<dir>` is the
inventory directory, or the directory holding the inventory file. Later files
replace earlier keys; empty files are ignored.

Precedence (VariableManager.get_vars with the default VARIABLE_PRECEDENCE
`all_inventory, groups_inventory, all_plugins_inventory, groups_plugins_inventory`).
ansible merges the files into each group's and host's own vars right after
parsing, then applies them once more at their plugin level, so in order, each
replacing what came before (shallow: a dict value is replaced whole):
  1. `all`'s vars (inventory + group_vars/all)
  2. every other group of the host (inventory + its group_vars file), sorted by
     (depth below `all`, ansible_group_priority, name)
  3. group_vars/all again
  4. the group_vars files of those groups again, same order
  5. the host's own vars (inventory + host_vars file), then the host_vars file again
Finally the names ansible-inventory hides (its INTERNAL_STATIC_VARS) are dropped.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..errors import InputError, Problem
from ..yamlsafe import load_text
from .graph import InventoryGraph

VARS_EXTENSIONS = (".yml", ".yaml", ".json")

# Names ansible sets itself; `ansible-inventory --list/--host` never shows them.
INTERNAL_VARS = frozenset(
    {
        "ansible_async_path",
        "ansible_collection_name",
        "ansible_config_file",
        "ansible_dependent_role_names",
        "ansible_diff_mode",
        "ansible_facts",
        "ansible_forks",
        "ansible_inventory_sources",
        "ansible_limit",
        "ansible_play_batch",
        "ansible_play_hosts",
        "ansible_play_hosts_all",
        "ansible_play_role_names",
        "ansible_playbook_python",
        "ansible_role_name",
        "ansible_role_names",
        "ansible_run_tags",
        "ansible_skip_tags",
        "ansible_verbosity",
        "ansible_version",
        "inventory_dir",
        "inventory_file",
        "inventory_hostname",
        "inventory_hostname_short",
        "groups",
        "group_names",
        "hostvars",
        "playbook_dir",
        "play_hosts",
        "role_name",
        "role_names",
        "role_path",
        "role_uuid",
    }
)


class VarsFiles:
    """group_vars/host_vars of one inventory directory, read once each."""

    def __init__(self, base_dir: str) -> None:
        self.base_dir = base_dir
        self.problems: list[Problem] = []
        self.files_read: list[str] = []
        self._blobs: dict[str, bytes] = {}
        self._loaded: dict[str, Any] = {}
        self._cache: dict[tuple[str, str], dict[str, Any]] = {}

    def vars_for(self, subdir: str, name: str) -> dict[str, Any]:
        key = (subdir, name)
        if key not in self._cache:
            merged: dict[str, Any] = {}
            for path in self._files_for(subdir, name):
                data = self._load(path)
                if data:
                    merged = {**merged, **data}
            self._cache[key] = merged
        return self._cache[key]

    def blob(self, path: str) -> bytes:
        return self._blobs[path]

    def _files_for(self, subdir: str, name: str) -> list[str]:
        if name.startswith(os.sep):  # ansible skips 'chroot'-style host names
            return []
        folder = os.path.join(self.base_dir, subdir)
        if not os.path.isdir(folder):
            return []
        for ext in ("", *VARS_EXTENSIONS):
            path = os.path.join(folder, name + ext)
            if os.path.exists(path):
                if not os.path.isdir(path):
                    return [path]
                try:
                    return _files_below(path, set())
                except OSError as exc:
                    self.problems.append(Problem(path, None, f"cannot read directory: {exc.strerror}"))
                    return []
        return []

    def _load(self, path: str) -> Any:
        if path not in self._loaded:
            self._loaded[path] = None
            try:
                with open(path, "rb") as f:
                    blob = f.read()
            except OSError as exc:
                self.problems.append(Problem(path, None, f"cannot read: {exc.strerror}"))
                return None
            self._blobs[path] = blob
            self.files_read.append(path)
            try:
                data = load_text(blob.decode("utf-8"), path)
            except UnicodeDecodeError as exc:
                self.problems.append(Problem(path, None, f"not UTF-8 text ({exc.reason})"))
                return None
            except InputError as exc:
                self.problems.extend(exc.problems)
                return None
            if data and not isinstance(data, Mapping):
                self.problems.append(
                    Problem(
                        path,
                        getattr(data, "line", 1),
                        "a vars file must be a mapping of variable names to values",
                    )
                )
                return None
            self._loaded[path] = data
        return self._loaded[path]


def _files_below(folder: str, seen: set[str]) -> list[str]:
    found: list[str] = []
    real = os.path.realpath(folder)
    if real in seen:  # a symlink loop
        return found
    seen.add(real)
    for entry in sorted(os.listdir(folder)):
        if entry.startswith(".") or entry.endswith("~"):
            continue
        path = os.path.join(folder, entry)
        ext = os.path.splitext(entry)[1]
        if os.path.isdir(path) and not ext:
            found.extend(_files_below(path, seen))
        elif os.path.isfile(path) and (not ext or ext in VARS_EXTENSIONS):
            found.append(path)
    return found


def merged_vars(graph: InventoryGraph, files: VarsFiles) -> tuple[dict[str, dict], dict[str, dict]]:
    """(group name -> the group's own vars, host name -> merged vars) as ansible computes them."""
    group_vars = {name: {**g.vars, **files.vars_for("group_vars", name)} for name, g in graph.groups.items()}
    depth = graph.depths()
    merged: dict[str, dict] = {}
    for name, host in graph.hosts.items():
        groups = sorted(
            (g for g in graph.host_groups(name) if g != "all"),
            key=lambda g: (depth.get(g, 1), graph.groups[g].priority, g),
        )
        result = dict(group_vars["all"])
        for g in groups:
            result |= group_vars[g]
        result |= files.vars_for("group_vars", "all")
        for g in groups:
            result |= files.vars_for("group_vars", g)
        result |= host.vars
        result |= files.vars_for("host_vars", name)  # merged into host.vars by ansible, then again
        merged[name] = {k: v for k, v in result.items() if k not in INTERNAL_VARS}
    return group_vars, merged
