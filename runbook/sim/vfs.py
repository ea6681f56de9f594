"""A node's file system as the shell sees it: regular files kept in the node's
state (/etc, /tmp, ...) plus files computed from the hardware state on every
read (/sys/class/infiniband, /proc/irq, /proc/meminfo, ...). Writable
computed files (smp_affinity_list) change the state they are computed from.
"""

from __future__ import annotations

import fnmatch
import functools
import posixpath
import re
from collections.abc import Callable

from . import sysfiles
from .cluster import Cluster
from .hardware import NodeState
from .tracked import NamesDict, NamesList

BASE_DIRS = {
    "/",
    "/root",
    "/tmp",
    "/etc",
    "/var",
    "/var/log",
    "/dev",
    "/usr",
    "/usr/bin",
    "/usr/sbin",
    "/bin",
    "/sbin",
    "/home",
    "/opt",
    "/proc",
    "/sys",
    "/etc/yum.repos.d",
    "/etc/modules-load.d",
    "/etc/sysctl.d",
    "/etc/modprobe.d",
    "/etc/security",
    "/etc/security/limits.d",
}
SYSTEMD_DIRS = {"/run", "/run/systemd", "/run/systemd/system"}  # exists while systemd is PID 1
DEVICES = {"/dev/null": "", "/dev/zero": "", "/dev/stdout": "", "/dev/stderr": ""}


class FsError(Exception):
    """errno-style reason: 'No such file or directory', 'Is a directory', ..."""


class NodeFs:
    def __init__(self, cluster: Cluster, node: NodeState):
        self.cluster = cluster
        self.node = node
        self._table: dict[str, Callable[[str], str]] | None = None
        self._writers: dict[str, Callable[[str, str], None]] = {}
        self._key: tuple = ()
        self._static_of: dict | None = None  # the table the computed part was built from
        self._static_systemd = False
        self._static_dirs: frozenset[str] = frozenset()
        self._static_children: dict[str, tuple[str, ...]] = {}
        self._own_of: tuple = ()  # node.files, node.dirs the own part was built from
        self._own_versions: tuple = ()
        self._own_dirs: set[str] = set()
        self._own_children: dict[str, tuple[str, ...]] = {}

    # ---- the computed part --------------------------------------------------
    def _dynamic(self) -> dict[str, Callable[[str], str]]:
        node = self.node
        # (modules, boot_count, irqs) the table was built for: what decides which paths
        # exist (`mst start` does not; it was in this key and rebuilt every node's table)
        key = self._key
        if (
            self._table is None
            or node.boot_count != key[1]
            or len(node.irqs) != key[2]
            or node.modules != key[0]  # compared as they are: no tuple built on every read
        ):
            self._table, self._writers = sysfiles.table(self.cluster, node)
            self._key = (list(node.modules), node.boot_count, len(node.irqs))
        return self._table

    def _all_dirs(self) -> set[str]:
        self._index()
        return self._static_dirs | self._own_dirs

    def _index(self) -> None:
        """Every directory and each one's entries, in two parts: the computed
        files' (rebuilt with their table) and the node's own files' and mkdir'ed
        directories' (rebuilt when a name is added or removed: sim/tracked.py
        counts that). A listing or a glob no longer rescans every path."""
        node = self.node
        files, made = node.files, node.dirs
        if type(files) is not NamesDict:  # built or loaded as plain containers
            files = node.files = NamesDict(files)
        if type(made) is not NamesList:
            made = node.dirs = NamesList(made)
        table = self._dynamic()
        systemd = node.platform.systemd
        if self._static_of is not table or self._static_systemd != systemd:
            self._static_dirs, self._static_children = _static_index(tuple(table), systemd)
            self._static_of, self._static_systemd = table, systemd
        # the containers themselves, compared by identity (an id can be reused), and their counts
        own = self._own_of
        if (
            not own
            or own[0] is not files
            or own[1] is not made
            or self._own_versions != (files.names_version, made.names_version)
        ):
            dirs = set(made) | _parents(files) | _parents(made)
            self._own_dirs, self._own_children = dirs, _entries(files, dirs)
            self._own_of, self._own_versions = (files, made), (files.names_version, made.names_version)

    def _versions(self) -> tuple:
        return (
            getattr(self.node.files, "names_version", None),
            getattr(self.node.dirs, "names_version", None),
        )

    def _index_added(self, path: str, before: tuple, is_dir: bool) -> None:
        """The own part of the index extended by one new file or directory, when it
        was current before the addition: what a rebuild would give. A detached
        job's script adds a file or two per command and then asks whether paths
        are directories: each question rebuilt the whole index of the node's
        files (tests/sim/test_vfs_index.py). Anything else still rebuilds."""
        files, made = self.node.files, self.node.dirs
        own = self._own_of
        if not own or own[0] is not files or own[1] is not made or self._own_versions != before:
            return
        dirs, children = self._own_dirs, self._own_children
        new_dirs = _parents([path]) - dirs
        if is_dir and path not in dirs:
            new_dirs.add(path)
        for p in (path, *new_dirs):  # _entries: every path and directory in its parent
            i = p.rfind("/")
            name = p[i + 1 :]
            if i < 0 or not name:
                continue
            parent = p[:i] or "/"
            names = children.get(parent, ())
            if name not in names:
                children[parent] = (*names, name)
        dirs |= new_dirs
        self._own_versions = self._versions()

    def _index_removed(self, path: str, before: tuple) -> None:
        """The own part of the index without one removed file, when it was current
        before the removal: what a rebuild would give. The file's name leaves its
        directory's entries; a directory left without entries that was not made
        by mkdir is implied by nothing any more and goes too, up the tree. A job's
        `mv x.tmp x` removes a file: each removal rebuilt the whole index. A path
        that is a directory of the index too still rebuilds."""
        files, made = self.node.files, self.node.dirs
        own = self._own_of
        if not own or own[0] is not files or own[1] is not made or self._own_versions != before:
            return
        dirs, children = self._own_dirs, self._own_children
        if path in dirs or not path.startswith("/") or path.endswith("/"):
            return
        p = path
        while True:
            i = p.rfind("/")
            parent, name = p[:i] or "/", p[i + 1 :]
            rest = tuple(n for n in children.get(parent, ()) if n != name)
            if rest:
                children[parent] = rest
                break
            children.pop(parent, None)
            if parent == "/" or parent in made:
                break
            dirs.discard(parent)  # it held only what was removed: nothing implies it now
            if parent in files:  # a file of that name stays listed in its directory
                break
            p = parent
        self._own_versions = self._versions()

    # ---- queries --------------------------------------------------------------
    @staticmethod
    def norm(path: str, cwd: str = "/root") -> str:
        if not path.startswith("/"):
            path = posixpath.join(cwd, path)
        elif "/." not in path and "//" not in path and (path == "/" or path[-1] != "/"):
            return path  # no empty, . or .. component: normpath's answer already
        return posixpath.normpath(path).replace("//", "/")

    @staticmethod
    def norm_many(paths: list[str], cwd: str = "/root") -> list[str]:
        """norm() of each: a path norm() answers with itself (absolute, no empty, .
        or .. part: a glob's every match) is kept without a call (896 of them
        in a `grep . pkeys/*`)."""
        norm = NodeFs.norm
        return [
            p if p[:1] == "/" and p[-1] != "/" and "/." not in p and "//" not in p else norm(p, cwd)
            for p in paths
        ]

    def isdir(self, path: str) -> bool:
        self._index()
        return path in self._static_dirs or path in self._own_dirs

    def isfile(self, path: str) -> bool:
        return path in self.node.files or path in self._dynamic() or path in DEVICES

    def exists(self, path: str) -> bool:
        return self.isfile(path) or self.isdir(path)

    def read(self, path: str) -> str:
        if path in self.node.files:
            return self.node.files[path]
        getter = self._dynamic().get(path)
        if getter is not None:
            return getter(path)
        if path in DEVICES:
            return ""
        if self.isdir(path):
            raise FsError("Is a directory")
        raise FsError("No such file or directory")

    def read_many(self, paths: list[str]) -> list[str | FsError]:
        """read() of each (normalised) path, in order, an FsError in the place of
        a path that cannot be read. The reads are one command's (nothing changes
        the node between them), so a run of paths served by one getter that
        answers many at once (sysfiles.PkeySlots) asks it once."""
        files = self.node.files
        table = self._dynamic()
        out: list[str | FsError] = []
        i, n = 0, len(paths)
        while i < n:
            path = paths[i]
            getter = None if path in files else table.get(path)
            many = getattr(getter, "many", None)
            if many is None:
                try:
                    out.append(self.read(path))
                except FsError as exc:
                    out.append(exc)
                i += 1
                continue
            j = i + 1
            while j < n and paths[j] not in files and table.get(paths[j]) is getter:
                j += 1
            out += many(paths[i:j])
            i = j
        return out

    def write(self, path: str, text: str, append: bool = False) -> None:
        if path in DEVICES:
            return
        self._dynamic()
        if self.isdir(path):
            raise FsError("Is a directory")
        writer = self._writers.get(path)
        if writer is not None:
            try:
                writer(path, text)
            except sysfiles.InvalidWrite as exc:
                raise FsError(str(exc)) from None
            return
        if path.startswith(("/proc/", "/sys/")):
            raise FsError("Permission denied" if path in self._dynamic() else "No such file or directory")
        parent = posixpath.dirname(path)
        if not self.isdir(parent):
            raise FsError("No such file or directory")
        files = self.node.files
        if path in files:
            files[path] = (files[path] if append else "") + text
            return
        before = self._versions()
        files[path] = text
        self._index_added(path, before, is_dir=False)

    def is_plain_file_path(self, path: str) -> bool:
        """A path a write stores as a regular file (not a device, /proc, /sys or computed file)."""
        self._dynamic()
        return not (
            path in DEVICES
            or path in self._writers
            or path in self._table
            or path.startswith(("/proc/", "/sys/"))
        )

    def check_writable(self, path: str) -> None:
        """What open(O_WRONLY|O_CREAT) would refuse, checked before a command runs."""
        self._dynamic()
        if path in DEVICES or path in self._writers:
            return
        if self.isdir(path):
            raise FsError("Is a directory")
        if path.startswith(("/proc/", "/sys/")):
            raise FsError("Permission denied" if path in self._dynamic() else "No such file or directory")
        if not self.isdir(posixpath.dirname(path)):
            raise FsError("No such file or directory")

    def mkdir(self, path: str, parents: bool = False) -> None:
        if self.exists(path):
            if self.isdir(path) and parents:
                return
            raise FsError("File exists")
        if path.startswith(("/proc/", "/sys/")):
            raise FsError("Permission denied")
        if not parents and not self.isdir(posixpath.dirname(path)):
            raise FsError("No such file or directory")
        before = self._versions()
        self.node.dirs.append(path)
        self._index_added(path, before, is_dir=True)

    def remove(self, path: str) -> None:
        if path in self.node.files:
            before = self._versions()
            del self.node.files[path]
            self._index_removed(path, before)
        elif self.exists(path):
            raise FsError(
                "Operation not permitted" if path.startswith(("/proc", "/sys")) else "Is a directory"
            )
        else:
            raise FsError("No such file or directory")

    def listdir(self, path: str) -> list[str]:
        if not self.isdir(path):
            raise FsError("Not a directory" if self.isfile(path) else "No such file or directory")
        key = path.rstrip("/") or "/"
        static, own = self._static_children.get(key, ()), self._own_children.get(key, ())
        return sorted(set(static).union(own)) if static and own else sorted(static or own)

    def glob(self, pattern: str, cwd: str = "/root") -> list[str]:
        """Shell pathname expansion; [] when nothing matches. Each pattern part is
        compiled once (fnmatchcase's own translation) and tried on a directory's
        names unsorted: the matches are sorted once at the end, so the order is
        what a sorted listing gives (a `pkeys/*` glob lists 128 names per port)."""
        absolute = pattern.startswith("/")
        parts = [p for p in pattern.split("/") if p]
        found = ["/" if absolute else cwd]
        # exists() and isdir() with their lookups done once: nothing changes the
        # node during one expansion (`cpu*/cpufreq/scaling_governor` asks 256 times)
        self._index()
        files, table = self.node.files, self._table
        dirs, own_dirs = self._static_dirs, self._own_dirs
        for part in parts:
            if GLOB_CHARS.search(part) is None or ("*" not in part and "?" not in part and "]" not in part):
                # a literal name (a "[" without a "]" is one too: fnmatch.translate
                # escapes it; the `[` of a `[ -f x ]` test comes here)
                found = [
                    cand
                    for cand in [_join(base, part) for base in found]
                    if cand in files or cand in table or cand in DEVICES or cand in dirs or cand in own_dirs
                ]
                continue
            match = _name_matcher(part)
            hidden = part.startswith(".")
            nxt: list[str] = []
            for base in found:
                if base not in dirs and base not in own_dirs:
                    continue
                prefix = base if base.endswith("/") else base + "/"  # posixpath.join(base, name)
                if part == "*":  # every name not hidden (a `pkeys/*`: 128 names a port)
                    nxt += [prefix + name for name in self._names(base) if name[:1] != "."]
                    continue
                nxt += [
                    prefix + name
                    for name in self._names(base)
                    if (hidden or not name.startswith(".")) and match(name) is not None
                ]
            found = nxt
        if not absolute:
            prefix = cwd.rstrip("/") + "/"
            found = [f[len(prefix) :] if f.startswith(prefix) else f for f in found]
        return sorted(found)

    def _names(self, path: str):
        """listdir(path) for a directory, unsorted (each name once)."""
        key = path.rstrip("/") or "/"
        static, own = self._static_children.get(key, ()), self._own_children.get(key, ())
        return set(static).union(own) if static and own else static or own


GLOB_CHARS = re.compile(r"[*?\[]")


@functools.lru_cache(maxsize=512)
def _name_matcher(part: str):
    """fnmatch.fnmatchcase(name, part) as one compiled match (what fnmatchcase does per call)."""
    return re.compile(fnmatch.translate(part)).match


def _join(base: str, name: str) -> str:
    """posixpath.join(base, name) for a name without "/"."""
    return base + name if base.endswith("/") else base + "/" + name


@functools.lru_cache(maxsize=64)
def _static_index(paths: tuple[str, ...], systemd: bool) -> tuple[frozenset[str], dict[str, tuple[str, ...]]]:
    """The directories and listings of a computed-file table's paths (and the
    fixed directories). Nodes of one design have tables of the same paths: the
    index is built once per set of paths, not once per node (~1 ms each), and
    shared; it is only ever read (the own part, rebuilt and extended apart, is
    the node's own)."""
    fixed = BASE_DIRS | (SYSTEMD_DIRS if systemd else set())
    dirs = frozenset(fixed | _parents(fixed) | _parents(paths))
    return dirs, _entries(paths, dirs)


def _entries(paths, dirs: set[str]) -> dict[str, tuple[str, ...]]:
    """Directory -> the names in it, for `paths` in directories `dirs`. `dirs`
    holds every ancestor of every path (_parents), so each path and directory
    adding itself to its parent lists every name a scan by prefix would find.
    Kept as tuples of names: the garbage collector stops tracking a tuple of
    strings, where a set stays tracked (hundreds per node, visited by every
    full collection)."""
    children: dict[str, set[str]] = {}
    for group in (paths, dirs):
        for p in group:
            i = p.rfind("/")
            name = p[i + 1 :]
            if i < 0 or not name:
                continue
            children.setdefault(p[:i] or "/", set()).add(name)
    return {d: tuple(names) for d, names in children.items()}


def _parents(paths) -> set[str]:
    """Every ancestor directory of the paths but "/" (the index's hot loop: a
    normalised absolute path is cut at its slashes, any other goes through dirname)."""
    dirs: set[str] = set()
    for p in paths:
        if p[:1] != "/" or "//" in p:
            d = posixpath.dirname(p)
            while d not in dirs and d != "/":
                dirs.add(d)
                d = posixpath.dirname(d)
            continue
        i = len(p) - 1 if p.endswith("/") else p.rfind("/")  # dirname("/a/b/") is "/a/b"
        while i > 0:
            d = p[:i]
            if d in dirs:
                break
            dirs.add(d)
            i = p.rfind("/", 0, i)
    return dirs
