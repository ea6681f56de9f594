"""Ansible YAML inventories, read with ansible-core's meaning.

    inv = load_inventory("inventory/")          # a .yaml/.yml file or a directory
    ansible_list(inv)   == json of `ansible-inventory -i PATH --list`
    ansible_host(inv, "gpu07") == json of `ansible-inventory -i PATH --host gpu07`
    dumps(ansible_list(inv)) + "\\n"   is byte for byte what ansible-inventory prints
    host_vars(inv, "gpu07")  merged vars + inventory_hostname, group_names, groups

A directory is read like ansible reads an inventory directory: its entries in
sorted name order, subdirectories recursively, hidden entries, `group_vars`,
`host_vars`, `vars_plugins` and ansible's ignored extensions (.md .txt .cfg
.bak .orig .retry ...) skipped. Of the remaining files only YAML ones (.yaml
.yml .json) are read; ansible would also try its INI parser on the others.
`group_vars/` and `host_vars/` beside the inventory are applied (inventory_vars.py).

Differences from ansible, all on purpose: a duplicate YAML key, an unknown key
in a group, a group that is not a mapping, a host range that expands to
nothing, a name used for a group and a host, and `!vault`/`!unsafe` tags are
errors (ansible warns or keeps the last), reported together as InputError
with one `FILE:LINE: message` per problem.

Inventory.sha256 is the SHA-256 of the bytes of every file read, in
Inventory.sources order: inventory files in reading order, then the
group_vars/host_vars files in path order (for one file with no vars files it
equals `sha256sum FILE`).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
from collections.abc import Mapping
from typing import Any

from ..definition.model import Group, Host, Inventory
from ..errors import InputError, Problem, UsageError
from ..yamlsafe import LineDict, LineList, load_text
from .graph import InventoryGraph
from .hostpattern import is_ip_address
from .hostsel import HostSelectionError, fold, select_hosts
from .hostvars import VarsFiles, merged_vars

__all__ = [
    "load_inventory",
    "ansible_list",
    "ansible_host",
    "dumps",
    "host_vars",
    "select_hosts",
    "fold",
    "HostSelectionError",
]

INVENTORY_EXTENSIONS = (".yaml", ".yml", ".json")
# ansible-core's defaults: IGNORED_ALWAYS + INVENTORY_IGNORE_EXTS (REJECT_EXTS + .orig .cfg .retry)
_IGNORED = re.compile(
    r"^\.|^host_vars$|^group_vars$|^vars_plugins$|"
    r"(\.pyc|\.pyo|\.swp|\.bak|~|\.rpm|\.md|\.txt|\.rst|\.orig|\.cfg|\.retry)$"
)
# What `ansible-inventory --list` (ansible-core 2.19) puts in _meta besides hostvars.
LIST_PROFILE = "inventory_legacy"


def load_inventory(path: str | os.PathLike) -> Inventory:
    """Read one inventory file or an inventory directory; InputError lists every problem."""
    path = os.fspath(path)
    if os.path.isdir(path):
        files: list[str] = []
        _inventory_files(path, files, set())
        if not files:
            raise InputError(Problem(path, None, "no YAML inventory file (.yaml, .yml) in this directory"))
        base_dir = path
    elif os.path.exists(path):
        files, base_dir = [path], os.path.dirname(path) or "."
    else:
        raise InputError(Problem(path, None, "no such inventory file or directory"))

    graph = InventoryGraph()
    blobs: list[bytes] = []
    for file in files:
        try:
            with open(file, "rb") as f:
                blob = f.read()
            data = load_text(blob.decode("utf-8"), file)
        except OSError as exc:
            graph.problems.append(Problem(file, None, f"cannot read: {exc.strerror}"))
            continue
        except UnicodeDecodeError as exc:
            graph.problems.append(Problem(file, None, f"not UTF-8 text ({exc.reason})"))
            continue
        except InputError as exc:
            graph.problems.extend(exc.problems)
            continue
        blobs.append(blob)
        graph.read(data, file)
    graph.reconcile()
    vars_files = VarsFiles(base_dir)
    group_vars, merged = merged_vars(graph, vars_files)  # also run on a flawed graph: report its files too
    if graph.problems or vars_files.problems:
        raise InputError(graph.problems + vars_files.problems)

    digest = hashlib.sha256()
    for blob in blobs:
        digest.update(blob)
    extra = sorted(vars_files.files_read)
    for file in extra:
        digest.update(vars_files.blob(file))

    hosts = {
        name: Host(name=name, vars=_plain(merged[name]), groups=_group_names(graph, name))
        for name in graph.hosts
    }
    groups = {
        name: Group(name=name, hosts=list(g.hosts), children=list(g.children), vars=_plain(group_vars[name]))
        for name, g in graph.groups.items()
    }
    return Inventory(hosts=hosts, groups=groups, sources=files + extra, sha256=digest.hexdigest())


def _inventory_files(folder: str, found: list[str], seen: set[str]) -> None:
    real = os.path.realpath(folder)
    if real in seen:  # a symlink loop
        return
    seen.add(real)
    try:
        entries = sorted(os.listdir(folder))
    except OSError as exc:
        raise InputError(Problem(folder, None, f"cannot read directory: {exc.strerror}")) from None
    for entry in entries:
        if _IGNORED.search(entry):
            continue
        path = os.path.join(folder, entry)
        if os.path.isdir(path):
            _inventory_files(path, found, seen)
        elif os.path.splitext(entry)[1] in INVENTORY_EXTENSIONS:
            found.append(path)


def _group_names(graph: InventoryGraph, host: str) -> list[str]:
    """ansible's `group_names`: every group of the host except `all`, sorted."""
    return sorted(g for g in graph.host_groups(host) if g != "all")


_SCALARS = frozenset((str, int, float, bool, type(None)))


def _plain(value: Any) -> Any:
    """LineDict/LineList -> dict/list, so the model holds ordinary data."""
    t = type(value)
    if t in _SCALARS:  # most values: no ABC check (every host's merged vars pass here)
        return value
    if t in _DICTS:  # (the ABC check below costs more than the copy of a small dict)
        return {k: v if type(v) in _SCALARS else _plain(v) for k, v in value.items()}
    if t in _LISTS:
        return [v if type(v) in _SCALARS else _plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


_DICTS = frozenset((dict, LineDict))
_LISTS = frozenset((list, LineList))


# -- ansible-inventory output ----------------------------------------------
def ansible_list(inv: Inventory) -> dict:
    """The document `ansible-inventory -i PATH --list` prints, as JSON-ready data."""
    result: dict[str, Any] = {}
    seen: set[str] = set()

    def add(name: str) -> None:
        group = inv.groups[name]
        entry: dict[str, Any] = {}
        if name != "all":  # ansible lists no hosts under `all`
            entry["hosts"] = list(group.hosts)
        entry["children"] = list(group.children)
        for child in group.children:
            if child not in seen:
                seen.add(child)
                add(child)
        entry = {k: v for k, v in entry.items() if v}
        if entry:  # a group with neither hosts nor children is left out (still named by its parent)
            result[name] = entry

    add("all")
    hostvars = {name: _jsonable(h.vars) for name, h in inv.hosts.items() if h.vars}
    result["_meta"] = {"hostvars": hostvars, "profile": LIST_PROFILE}
    return result


def ansible_host(inv: Inventory, name: str) -> dict:
    """The document `ansible-inventory -i PATH --host NAME` prints."""
    if name not in inv.hosts:
        raise UsageError(f"unknown host {name!r}: not in the inventory")
    return _jsonable(inv.hosts[name].vars)


def dumps(document: Any) -> str:
    """JSON text formatted exactly as ansible-inventory prints it (without the final newline)."""
    return json.dumps(document, sort_keys=True, indent=4, ensure_ascii=False)


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, (bool, int, float)):
        return json.dumps(key)  # 1 -> "1", True -> "true", None -> "null", 2.5 -> "2.5"
    return str(key)


def _jsonable(value: Any) -> Any:
    """Values as ansible's inventory JSON encoder writes them: dates in ISO
    format, sets and tuples as lists, every mapping key a string."""
    if isinstance(value, Mapping):
        return {_json_key(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return [_jsonable(v) for v in sorted(value, key=str)]
    if isinstance(value, (_dt.date, _dt.datetime, _dt.time)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if value is None or isinstance(value, (str, bool, int, float)):
        return value  # NaN and infinities print as NaN / Infinity, as ansible's do
    return str(value)


# -- template variables ----------------------------------------------------
def host_vars(inv: Inventory, name: str) -> dict[str, Any]:
    """A host's merged vars plus ansible's magic vars: inventory_hostname,
    inventory_hostname_short, group_names, groups (group -> member hosts)."""
    if name not in inv.hosts:
        raise UsageError(f"unknown host {name!r}: not in the inventory")
    host = inv.hosts[name]
    result = dict(host.vars)
    result["inventory_hostname"] = name
    result["inventory_hostname_short"] = name if is_ip_address(name) else name.split(".")[0]
    result["group_names"] = list(host.groups)
    result["groups"] = _groups_magic(inv)
    return result


_last_groups: tuple[Inventory, dict[str, list[str]]] | None = None


def _groups_magic(inv: Inventory) -> dict[str, list[str]]:
    """`groups` (group -> hosts), computed once per inventory: host_vars is called
    for every host and template. Shared between calls: treat it as read-only."""
    global _last_groups
    if _last_groups is None or _last_groups[0] is not inv:
        _last_groups = (inv, {g: inv.group_members(g) for g in inv.groups})
    return _last_groups[1]
