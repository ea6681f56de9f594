"""The group/host graph of an Ansible YAML inventory, built the way ansible-core
builds it (plugins/inventory/yaml.py, inventory/data.py, group.py, host.py):

- top-level keys are groups; each group may have `hosts`, `children`, `vars`;
  a plain string in one of those is short for a one-key mapping;
- keys are processed in the order written, children depth first, so hosts and
  groups are created in document order, file after file;
- setting a variable again replaces it (a dict is replaced, never merged);
  `ansible_group_priority` sets the group's priority and is not a variable;
- a `host:port` key sets `ansible_port` only when the host is first created;
- afterwards every group without a parent becomes a child of `all`, and hosts
  in no group but `all` go to `ungrouped` (and only those).

Where ansible only warns and skips (an unknown key in a group, a group that is
not a mapping) or gives up on the file, this reader records a Problem and goes
on, so one run reports every mistake as FILE:LINE: message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import Problem
from ..yamlsafe import LineDict
from .hostpattern import HostPatternError, parse_host_key

SECTIONS = ("hosts", "children", "vars")


@dataclass
class RawGroup:
    """A group as the inventory files declare it, before vars are merged."""

    name: str
    file: str = ""
    line: int = 0
    hosts: list[str] = field(default_factory=list)  # direct members, in the order added
    children: list[str] = field(default_factory=list)
    parents: list[str] = field(default_factory=list)
    vars: dict[str, Any] = field(default_factory=dict)
    priority: int = 1


@dataclass
class RawHost:
    """A host as the inventory files declare it, before vars are merged."""

    name: str
    file: str = ""
    line: int = 0
    vars: dict[str, Any] = field(default_factory=dict)
    groups: list[str] = field(default_factory=list)  # direct memberships


def _line(mapping: Any, key: Any, default: int) -> int:
    return mapping.line_of(key) if isinstance(mapping, LineDict) else default


_PORT_VARS = {"ansible_port", "ansible_ssh_port"}


def _port_problem(value: Any) -> str | None:
    """Why a port value cannot be connected to (None: it can). Ansible only finds
    out at connect time; a run would make every such host unknown."""
    if isinstance(value, str) and "{{" in value:
        return None
    if isinstance(value, bool):
        return f"must be a port number 1-65535, found {value!r}"
    try:
        port = int(str(value).strip()) if isinstance(value, (str, int)) else None
    except ValueError:
        port = None
    if port is None or not 0 < port < 65536:
        return f"must be a port number 1-65535, found {value!r}"
    return None


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return type(value).__name__


class InventoryGraph:
    def __init__(self) -> None:
        self.groups: dict[str, RawGroup] = {}
        self.hosts: dict[str, RawHost] = {}
        self.problems: list[Problem] = []
        for name in ("all", "ungrouped"):
            self.groups[name] = RawGroup(name)
        self._add_child("all", "ungrouped", "", 0)

    # -- reading -----------------------------------------------------------
    def read(self, data: Any, file: str) -> None:
        """Add one loaded YAML inventory document."""
        if data is None or data == {}:
            self._problem(file, None, "empty inventory file")
            return
        if not isinstance(data, Mapping):
            self._problem(
                file, getattr(data, "line", 1), f"expected a mapping of groups, found {_kind(data)}"
            )
            return
        if data.get("plugin"):
            self._problem(
                file,
                _line(data, "plugin", 1),
                "inventory plugin configuration is not supported: write a static YAML inventory",
            )
            return
        for name, body in data.items():
            self._read_group(name, body, file, _line(data, name, 1))

    def _read_group(self, name: Any, body: Any, file: str, line: int) -> str | None:
        if not isinstance(name, str) or not name:
            self._problem(file, line, f"group name must be a non-empty string, found {name!r}")
            return None
        if body is not None and not isinstance(body, Mapping):
            self._problem(
                file, line, f"group '{name}' must be a mapping with hosts/children/vars, found {_kind(body)}"
            )
            return None
        group = self.groups.get(name)
        if group is None:
            group = self.groups[name] = RawGroup(name, file, line)
        elif not group.file:
            group.file, group.line = file, line
        for key, section in (body or {}).items():
            where = _line(body, key, line)
            if key not in SECTIONS:
                self._problem(
                    file,
                    where,
                    f"unknown key {key!r} in group '{name}' (a group has only hosts, children and vars)",
                )
                continue
            if isinstance(section, str):
                section = {section: None}
            if section is None:
                continue
            if not isinstance(section, Mapping):
                self._problem(
                    file, where, f"'{key}' of group '{name}' must be a mapping, found {_kind(section)}"
                )
                continue
            for item, value in section.items():
                item_line = _line(section, item, where)
                if key == "vars":
                    self._set_group_var(group, item, value, file, item_line)
                elif key == "children":
                    child = self._read_group(item, value, file, item_line)
                    if child is not None:
                        self._add_child(name, child, file, item_line)
                else:
                    self._read_hosts(name, item, value, file, item_line)
        return name

    def _read_hosts(self, group: str, key: Any, values: Any, file: str, line: int) -> None:
        if not isinstance(key, str):
            self._problem(file, line, f"host {key!r} must be a string (quote numbers)")
            return
        try:
            names, port = parse_host_key(key)
        except HostPatternError as exc:
            self._problem(file, line, f"host '{key}': {exc}")
            return
        if values is None:
            values = {}
        if not isinstance(values, Mapping):
            self._problem(file, line, f"host '{key}' must be a mapping of variables, found {_kind(values)}")
            return
        for var in _PORT_VARS & set(values):
            bad = _port_problem(values[var])
            if bad:
                at = values.line_of(var) if hasattr(values, "line_of") else line
                self._problem(file, at, f"host '{key}': {var} {bad}")
        for name in names:
            if not name:
                self._problem(file, line, "empty host name")
                continue
            if "," in name or any(ch.isspace() for ch in name):
                # `gpu04,gpu05` would read as two hosts in every host list and --hosts
                self._problem(
                    file,
                    line,
                    f"host '{name}': a host name cannot contain a comma or "
                    "a space (host lists are comma-separated); one key per host",
                )
                continue
            self._add_host(name, group, port, file, line)
            self.hosts[name].vars.update(values)

    def _set_group_var(self, group: RawGroup, key: Any, value: Any, file: str, line: int) -> None:
        if key in _PORT_VARS and _port_problem(value):
            self._problem(file, line, f"{key} {_port_problem(value)}")
        if key == "ansible_group_priority":
            try:
                group.priority = int(value)
            except (TypeError, ValueError):
                self._problem(file, line, f"ansible_group_priority must be an integer, found {value!r}")
            return
        group.vars[key] = value

    # -- graph -------------------------------------------------------------
    def _add_host(self, name: str, group: str | None, port: int | None, file: str, line: int) -> None:
        host = self.hosts.get(name)
        if host is None:
            host = self.hosts[name] = RawHost(name, file, line)
            if port:
                host.vars["ansible_port"] = port
        if group and name not in self.groups[group].hosts:
            self.groups[group].hosts.append(name)
            host.groups.append(group)

    def _add_child(self, parent: str, child: str, file: str, line: int) -> None:
        if child == parent:
            self._problem(file, line, f"group '{child}' lists itself as a child")
            return
        if child in self.groups[parent].children:
            return
        if child in self.ancestors(parent):
            cycle = [parent, *self._path_down(child, parent)]
            self._problem(file, line, f"group cycle {' -> '.join(cycle)}: a group cannot be its own ancestor")
            return
        self.groups[parent].children.append(child)
        if parent not in self.groups[child].parents:
            self.groups[child].parents.append(parent)

    def _path_down(self, start: str, goal: str) -> list[str]:
        """A child-wise path start -> ... -> goal (one exists when called)."""
        stack, seen = [[start]], {start}
        while stack:
            path = stack.pop()
            if path[-1] == goal:
                return path
            for c in self.groups[path[-1]].children:
                if c not in seen:
                    seen.add(c)
                    stack.append(path + [c])
        return [start, goal]  # pragma: no cover - unreachable

    def ancestors(self, group: str) -> set[str]:
        seen: set[str] = set()
        todo = list(self.groups[group].parents)
        while todo:
            g = todo.pop()
            if g not in seen:
                seen.add(g)
                todo.extend(self.groups[g].parents)
        return seen

    def host_groups(self, host: str) -> set[str]:
        """Every group the host is in, directly or through a child group."""
        result: set[str] = set()
        for g in self.hosts[host].groups:
            result.add(g)
            result |= self.ancestors(g)
        return result

    def reconcile(self) -> None:
        """Ansible's post-parse rules: orphan groups under `all`, `ungrouped`."""
        for name, group in list(self.groups.items()):
            if name != "all" and not group.parents:
                self._add_child("all", name, group.file, group.line)
        ungrouped = self.groups["ungrouped"]
        for name, host in self.hosts.items():
            groups = self.host_groups(name)
            if "ungrouped" in groups:
                if groups - {"all", "ungrouped"} and name in ungrouped.hosts:
                    ungrouped.hosts.remove(name)
                    host.groups.remove("ungrouped")
            elif not groups - {"all"}:
                self._add_host(name, "ungrouped", None, host.file, host.line)
        for name in self.groups.keys() & self.hosts.keys():
            host = self.hosts[name]
            self._problem(host.file, host.line, f"'{name}' is both a group and a host: rename one")

    def depths(self) -> dict[str, int]:
        """Longest path from `all` (ansible's Group.depth once everything is added)."""
        depth = {"all": 0}
        order = ["all"]
        for g in order:  # the graph is acyclic: relax edges breadth first until stable
            for c in self.groups[g].children:
                if depth.get(c, -1) < depth[g] + 1:
                    depth[c] = depth[g] + 1
                    order.append(c)
        return depth

    def _problem(self, file: str, line: int | None, message: str) -> None:
        self.problems.append(Problem(file, line, message))
