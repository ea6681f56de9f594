"""A real OpenSSH sshd on 127.0.0.1 for integration tests (any area may reuse it).

    from tests.sshd_server import sshd_server   # in a conftest.py: the fixture

    def test_x(sshd_server):
        sshd_server.port, sshd_server.client_key, sshd_server.known_hosts, sshd_server.user

Each server gets its own directory: a generated ed25519 host key and client
key, an authorized_keys, an sshd_config (free port, loopback only, keys only,
no PAM, MaxStartups 100:30:200, SetEnv SHLVL=1 so Debian's bash does not source
~/.bashrc per command). It runs as `/usr/sbin/sshd -D -e -f CONFIG` (absolute
path: sshd re-execs itself), dies with the test process (PR_SET_PDEATHSIG), and
is stopped by pid, together with the per-connection children it forked.
Skipped with a clear reason when sshd is not installed."""

from __future__ import annotations

import ctypes
import getpass
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh
import pytest

SSHD = "/usr/sbin/sshd"
START_TIMEOUT = 10.0


def sshd_unavailable() -> str | None:
    """Why a real sshd cannot be used here, or None."""
    if not os.access(SSHD, os.X_OK):
        return f"{SSHD} is not installed (apt-get install openssh-server)"
    run_sshd = Path("/run/sshd")  # privilege separation directory
    if not run_sshd.is_dir():
        try:
            run_sshd.mkdir(mode=0o755, parents=True)
        except OSError as e:
            return f"sshd needs {run_sshd}, which cannot be created: {e}"
    return None


def _die_with_parent() -> None:
    try:
        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_key(path: Path, key: asyncssh.SSHKey) -> None:
    key.write_private_key(str(path))
    os.chmod(path, 0o600)  # sshd refuses a group/world-readable host key


@dataclass
class SshdServer:
    dir: Path
    port: int = 0
    user: str = field(default_factory=getpass.getuser)
    proc: subprocess.Popen | None = None
    addr: str = "127.0.0.1"
    extra_config: str = ""

    @property
    def host_key(self) -> Path:
        return self.dir / "ssh_host_ed25519_key"

    @property
    def client_key(self) -> Path:
        return self.dir / "client_key"

    @property
    def known_hosts(self) -> Path:
        """A known_hosts file holding the current host key."""
        path = self.dir / "known_hosts"
        path.write_text(self.known_hosts_line())
        return path

    @property
    def log(self) -> Path:
        return self.dir / "sshd.log"

    def host_public_key(self) -> asyncssh.SSHKey:
        return asyncssh.read_public_key(str(self.host_key) + ".pub")

    def known_hosts_line(self) -> str:
        pub = self.host_public_key().export_public_key("openssh").decode().split()
        return f"[{self.addr}]:{self.port} {pub[0]} {pub[1]}\n"

    def new_host_key(self) -> None:
        """Replace the host key (a reinstalled node); takes effect on restart()."""
        key = asyncssh.generate_private_key("ssh-ed25519")
        _write_key(self.host_key, key)
        key.write_public_key(str(self.host_key) + ".pub")

    def _setup(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "sshd.pid").unlink(missing_ok=True)
        if not self.host_key.exists():
            self.new_host_key()
        if not self.client_key.exists():
            ck = asyncssh.generate_private_key("ssh-ed25519")
            _write_key(self.client_key, ck)
            (self.dir / "authorized_keys").write_bytes(ck.export_public_key("openssh"))
        self.port = self.port or _free_port()
        (self.dir / "sshd_config").write_text(f"""\
Port {self.port}
ListenAddress {self.addr}
HostKey {self.host_key}
AuthorizedKeysFile {self.dir / "authorized_keys"}
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
UseDNS no
PidFile {self.dir / "sshd.pid"}
MaxStartups 100:30:200
LoginGraceTime 30
SetEnv SHLVL=1
AllowTcpForwarding yes
LogLevel ERROR
{self.extra_config}
""")

    def start(self) -> SshdServer:
        self._setup()
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [SSHD, "-D", "-e", "-f", str(self.dir / "sshd_config")],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                preexec_fn=_die_with_parent,
            )
        deadline = time.monotonic() + START_TIMEOUT
        pid_file = self.dir / "sshd.pid"
        while time.monotonic() < deadline:  # sshd writes its PidFile once it listens
            if self.proc.poll() is not None:
                raise RuntimeError(f"sshd exited with {self.proc.returncode}: {self.log.read_text()}")
            if pid_file.exists() and pid_file.read_text().strip() == str(self.proc.pid):
                return self
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"sshd did not listen on {self.addr}:{self.port} within {START_TIMEOUT}s")

    def stop(self) -> None:
        """Stop the sshd we started and the per-connection processes it forked (by pid)."""
        if self.proc is None:
            return
        pids = []
        try:
            import psutil

            pids = [c.pid for c in psutil.Process(self.proc.pid).children(recursive=True)]
        except Exception:
            pass
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()


@pytest.fixture
def sshd_server(tmp_path):
    reason = sshd_unavailable()
    if reason:
        pytest.skip(reason)
    srv = SshdServer(tmp_path / "sshd").start()
    try:
        yield srv
    finally:
        srv.stop()
