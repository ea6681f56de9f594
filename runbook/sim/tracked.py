"""A node's files and mkdir'ed directories as containers that count changes to
their set of names (sim/vfs.py keeps a directory index until the count moves).
Rewriting a file's content does not move it: names are all the index holds."""

from __future__ import annotations


class NamesDict(dict):
    """A dict whose `names_version` moves when a key is added or removed."""

    names_version = 0

    def __setitem__(self, key, value) -> None:
        if key not in self:
            self.names_version += 1
        super().__setitem__(key, value)

    def __delitem__(self, key) -> None:
        super().__delitem__(key)
        self.names_version += 1

    def pop(self, *args):
        self.names_version += 1
        return super().pop(*args)

    def popitem(self):
        self.names_version += 1
        return super().popitem()

    def setdefault(self, key, default=None):
        if key not in self:
            self.names_version += 1
        return super().setdefault(key, default)

    def update(self, *args, **kw) -> None:
        self.names_version += 1
        super().update(*args, **kw)

    def clear(self) -> None:
        self.names_version += 1
        super().clear()

    def __ior__(self, other):
        self.names_version += 1
        return super().__ior__(other)


class NamesList(list):
    """A list whose `names_version` moves on every change."""

    names_version = 0


def _counting(name: str):
    method = getattr(list, name)

    def changed(self, *args):
        self.names_version += 1
        return method(self, *args)

    changed.__name__ = name
    return changed


for _name in (
    "append",
    "extend",
    "insert",
    "remove",
    "pop",
    "clear",
    "__setitem__",
    "__delitem__",
    "__iadd__",
    "__imul__",
):
    setattr(NamesList, _name, _counting(_name))
