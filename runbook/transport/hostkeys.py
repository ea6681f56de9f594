"""Host-key policy: strict by default, opt-in trust-on-first-use.

Keys are looked up in OpenSSH known_hosts files (the user's plus every
`runbook_known_hosts` of the inventory) and in the run's own pin file. asyncssh
is given a *callable* for `known_hosts` (so checking is always on: passing None
would silently accept any key) and calls `validate_host_public_key` on our
client object only for a key that is not among the known ones; that is where
this policy decides: a host with a known key that differs is always refused,
a host with no known key is refused unless `trust_new`, in which case the key
is pinned once the key exchange has proved the server holds it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import asyncssh
from asyncssh import SSHKey, SSHKnownHosts

from runbook.errors import InputError, Problem

OnHostKey = Callable[[str, str, str], None]  # (host, "SHA256:...", how)


def fingerprint(key: SSHKey) -> str:
    return key.get_fingerprint("sha256")


def known_hosts_name(host: str, port: int | None) -> str:
    """The host field OpenSSH writes: `host` on port 22, `[host]:port` otherwise."""
    return f"[{host}]:{port}" if port and port != 22 else host


def _entry_problem(line: str) -> str | None:
    """Why one known_hosts line is not an entry OpenSSH would use (None: it is).
    asyncssh skips a key it cannot read without a word; a garbage line that
    silently holds no key would make a host look unknown for the wrong reason."""
    words = line.split()
    marker = words.pop(0) if words and words[0].startswith("@") else None
    if marker not in (None, "@revoked", "@cert-authority"):
        return f"unknown marker {marker} (OpenSSH knows @revoked and @cert-authority)"
    if len(words) < 3:
        return "expected: [@marker] HOSTS KEYTYPE BASE64-KEY [comment]"
    try:
        asyncssh.import_public_key(f"{words[1]} {words[2]}")
    except (asyncssh.KeyImportError, ValueError) as e:
        try:
            asyncssh.import_certificate(f"{words[1]} {words[2]}")
        except (asyncssh.KeyImportError, ValueError):
            return f"not a public key: {e}"
    return None


def known_hosts_problems(path: Path) -> list[Problem]:
    """Every line of a known_hosts file that holds no usable entry, as FILE:LINE."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        return [Problem(str(path), None, f"cannot read: {e.strerror}")]
    problems = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.strip() and not line.lstrip().startswith("#"):
            why = _entry_problem(line)
            if why:
                problems.append(Problem(str(path), lineno, f"bad known_hosts entry: {why}"))
    return problems


def _revoked_only(text: str) -> SSHKnownHosts:
    """The @revoked lines as plain entries: asyncssh's match() drops the revoked
    keys of a `[host]:port` entry when it falls back to the portless lookup, so
    revocations are looked up on their own."""
    lines = [
        line.split(None, 1)[1]
        for line in text.splitlines()
        if line.split(None, 1)[:1] == ["@revoked"] and len(line.split()) >= 4
    ]
    return asyncssh.import_known_hosts("\n".join(lines) + "\n") if lines else SSHKnownHosts()


def _load_file(path: Path) -> tuple[SSHKnownHosts | None, SSHKnownHosts | None]:
    """The file's entries and its @revoked entries (None: it has none of them)."""
    problems = known_hosts_problems(path)
    if problems:
        raise InputError(problems)
    text = path.read_text(encoding="utf-8", errors="replace")
    entries = any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines())
    try:
        known = asyncssh.import_known_hosts(text) if entries else None
        revoked = _revoked_only(text) if "@revoked" in text else None
    except ValueError as e:
        raise InputError(Problem(str(path), None, f"bad known_hosts file: {e}")) from None
    return known, revoked


class HostKeyPolicy:
    def __init__(
        self, known_hosts_files: list[Path], *, trust_new: bool = False, pin_file: Path | None = None
    ):
        self.trust_new = trust_new
        self.pin_file = Path(pin_file) if pin_file is not None else None
        if trust_new and self.pin_file is None:
            raise ValueError("trust_new needs a pin_file to record the pinned keys in")
        self._files: list[tuple[Path, SSHKnownHosts | None]] = []  # None: no entries
        self._revoked: list[tuple[Path, SSHKnownHosts]] = []
        # lookup()'s answers by endpoint, until a key is pinned or a file added: each
        # connection asks twice (connect.py's key types, asyncssh's known_hosts
        # callable), and each ask matches every file (~35 us per host at 1,000)
        self._lookups: dict[tuple[str, str, int | None], tuple[list, list, list]] = {}
        self._seen: set[Path] = set()
        # the names already added, as given: every host of an inventory names the same
        # file, and resolving it (a few lstat calls) for each of 1,000 hosts showed
        self._named: set[str] = set()
        for f in known_hosts_files:
            self.add_known_hosts(f)
        if self.pin_file is not None:
            if self.pin_file.is_symlink():  # it is written to: never through a link
                raise InputError(
                    Problem(
                        str(self.pin_file),
                        None,
                        "is a symbolic link; the pin file is never read or written through one",
                    )
                )
            self.add_known_hosts(self.pin_file)
        self._pinned = SSHKnownHosts()  # keys pinned by this process, not yet re-read from disk
        self._pinned_any = False
        self._unwritten: list[str] = []

    def add_known_hosts(self, path: Path | str) -> None:
        """Add one more known_hosts file (e.g. an inventory's runbook_known_hosts).
        A file that does not exist simply holds no keys."""
        if str(path) in self._named:
            return
        self._named.add(str(path))
        p = Path(path).expanduser()
        real = p.resolve()
        if real in self._seen:
            return
        self._seen.add(real)
        if p.is_file():
            known, revoked = _load_file(p)
            self._files.append((p, known))
            if revoked is not None:
                self._revoked.append((p, revoked))
            self._lookups.clear()

    @property
    def files(self) -> list[Path]:
        return [p for p, _ in self._files]

    def lookup(self, host: str, addr: str, port: int | None):
        """Known host keys for this endpoint as [(key, file)], plus CA keys and
        revoked keys, also as [(key, file)]."""
        endpoint = (host, addr, port)
        found = self._lookups.get(endpoint)
        if found is None:
            found = self._lookups[endpoint] = self._lookup(host, addr, port)
        keys, ca, revoked = found
        return list(keys), list(ca), list(revoked)

    def _lookup(self, host: str, addr: str, port: int | None):
        keys: list[tuple[SSHKey, Path]] = []
        ca: list[tuple[SSHKey, Path]] = []
        revoked: list[tuple[SSHKey, Path]] = []
        sources = [(path, kh) for path, kh in self._files if kh is not None]
        if self.pin_file is not None and self._pinned_any:
            sources.append((self.pin_file, self._pinned))
        for path, kh in sources:
            k, c, *_ = kh.match(host, addr, port)
            keys.extend((key, path) for key in k)
            ca.extend((key, path) for key in c)
        for path, kh in self._revoked:
            revoked.extend((key, path) for key in kh.match(host, addr, port)[0])
        # a revoked key is never a known one, whatever other line lists it
        keys = [(k, p) for k, p in keys if all(k != r for r, _ in revoked)]
        return keys, ca, revoked

    def judge(
        self,
        name: str,
        known: list[tuple[SSHKey, Path]],
        key: SSHKey,
        revoked: list[tuple[SSHKey, Path]] = (),
        ca: list[tuple[SSHKey, Path]] = (),
    ) -> str | None:
        """For a presented key that is NOT among the known ones: None to accept it
        (trust-on-first-use of a host with no known key), else the refusal reason:
        revoked, changed, algorithm mismatch, certificate expected, no known key."""
        got = fingerprint(key)
        where_revoked = next((p for r, p in revoked if r == key), None)
        if where_revoked is not None:
            return f"host key for {name} is revoked: {got} is marked @revoked in {where_revoked}"
        if known:
            same_type = [(k, p) for k, p in known if k.algorithm == key.algorithm]
            if not same_type:
                types = ", ".join(sorted({k.algorithm.decode() for k, _ in known}))
                return (
                    f"host key algorithm mismatch for {name}: {known[0][1]} knows only "
                    f"{types} keys, the host offers {key.algorithm.decode()} {got} — "
                    f"if the node was reinstalled, remove the old key from {known[0][1]}"
                )
            expected = " or ".join(dict.fromkeys(fingerprint(k) for k, _ in same_type))
            where = same_type[0][1]
            return (
                f"host key for {name} changed: expected {expected}, got {got} — "
                f"if the node was reinstalled, remove the old key from {where}"
            )
        if ca:
            return (
                f"host key for {name} is a plain key {got}, but {ca[0][1]} expects a "
                f"certificate signed by its @cert-authority"
            )
        if not self.trust_new:
            return f"no known key for {name} (use --trust-new-hosts to pin it)"
        return None

    def pin(self, host: str, port: int | None, key: SSHKey) -> None:
        """Remember a trusted-on-first-use key now; `flush()` writes it to the pin file."""
        assert self.pin_file is not None
        blob = key.export_public_key("openssh").decode().split()
        line = f"{known_hosts_name(host, port)} {blob[0]} {blob[1]}\n"
        self._pinned.load(line)
        self._pinned_any = True
        self._lookups.clear()
        self._unwritten.append(line)

    def flush(self) -> None:
        """Write pinned keys to the pin file atomically (temp file, fsync, rename).
        Pins of one burst of handshakes are written together."""
        if not self._unwritten or self.pin_file is None:
            return
        path = self.pin_file
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if old and not old.endswith("\n"):
            old += "\n"
        data = old + "".join(self._unwritten)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0), 0o600
        )  # owner-only, never through a link
        with open(fd, "w", encoding="utf-8") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        self._unwritten.clear()


class HostKeyCheck:
    """The host-key side of one connection attempt (asyncssh calls in here)."""

    def __init__(self, policy: HostKeyPolicy, name: str, on_host_key: OnHostKey | None):
        self.policy = policy
        self.name = name
        self.on_host_key = on_host_key
        self.known: list[tuple[SSHKey, Path]] = []
        self.ca: list[tuple[SSHKey, Path]] = []
        self.revoked: list[tuple[SSHKey, Path]] = []
        self.refusal: str | None = None
        self._endpoint: tuple[str, int | None] = (name, None)
        self._to_pin: SSHKey | None = None
        self._pinned = False

    def known_hosts(self, host: str, addr: str, port: int | None):
        """asyncssh's `known_hosts` callable: the trusted keys for this endpoint."""
        self._endpoint = (host, port)
        self.known, self.ca, self.revoked = self.policy.lookup(host, addr, port)
        return [k for k, _ in self.known], [k for k, _ in self.ca], [k for k, _ in self.revoked]

    def validate(self, key: SSHKey) -> bool:
        """A key that is not among the known ones was presented."""
        self.refusal = self.policy.judge(self.name, self.known, key, self.revoked, self.ca)
        if self.refusal is None:
            self._to_pin = key
            return True
        return False

    def explain(self, reason: str) -> str:
        """asyncssh refused before asking us (a revoked key or CA, a bad certificate)."""
        if "revoked" in reason.lower() and self.revoked:
            fps = " or ".join(dict.fromkeys(fingerprint(k) for k, _ in self.revoked))
            return f"host key for {self.name} is revoked: {fps} is marked @revoked in {self.revoked[0][1]}"
        if "certificate" in reason.lower() or "ca key" in reason.lower():
            where = f" ({self.ca[0][1]})" if self.ca else ""
            return f"host certificate for {self.name} refused: {reason}{where}"
        return f"{self.name}: {reason}"

    def kex_done(self) -> None:
        """The server proved it holds the key: only now is a new key pinned."""
        if self._to_pin is not None and not self._pinned:
            host, port = self._endpoint
            self.policy.pin(host, port, self._to_pin)
            self._pinned = True
            if self.on_host_key:
                self.on_host_key(self.name, fingerprint(self._to_pin), "pinned")

    def connected(self, server_key: SSHKey | None) -> None:
        self.policy.flush()
        if not self._pinned and server_key is not None and self.on_host_key:
            self.on_host_key(self.name, fingerprint(server_key), "known_hosts")


SITE_PINS = "known_hosts"


def site_pins(state_dir: Path | str) -> tuple[Path, list[Path]]:
    """The state directory's pin file (keys pinned on first use belong to the site,
    not to one run: a new run checks against every key pinned before) and the
    per-run pin files older versions wrote, still read as known keys."""
    state_dir = Path(state_dir)
    older = sorted(p for p in state_dir.glob(f"*/{SITE_PINS}") if p.is_file())
    return state_dir / SITE_PINS, older
