"""Run `python -m runbook.sim` as a child process (for engine tests and benchmarks):

    with SimProcess(tmp_path / "lab", nodes=48, scenario=None) as sim:
        sim.ssh_config, sim.inventory, sim.known_hosts, sim.client_key, sim.pid
    # stopped (SIGTERM, then SIGKILL) by pid on exit, never outlives its --lifetime

`scenario=None` starts a compliant cluster (scenarios/empty.yaml).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from .scenario import EMPTY


def random_base() -> str:
    """A random 127.x.y.0 base so parallel test sessions do not collide."""
    return f"127.{random.randint(100, 250)}.{random.randint(1, 250)}.0"


class SimProcess:
    def __init__(
        self,
        directory: str | Path,
        nodes: int = 8,
        scenario: str | Path | None = None,
        base_address: str | None = None,
        port: int = 0,
        lifetime: float = 600.0,
        reboot_seconds: float = 1.0,
        slow_seconds: float = 3.0,
        extra: list[str] | None = None,
        ready_timeout: float = 60.0,
    ):
        self.dir = Path(directory).resolve()
        self.args = [
            sys.executable,
            "-m",
            "runbook.sim",
            "--dir",
            str(self.dir),
            "--nodes",
            str(nodes),
            "--scenario",
            str(scenario or EMPTY),
            "--base-address",
            base_address or random_base(),
            "--port",
            str(port),
            "--lifetime",
            str(lifetime),
            "--reboot-seconds",
            str(reboot_seconds),
            "--slow-seconds",
            str(slow_seconds),
            *(extra or []),
        ]
        self.ready_timeout = ready_timeout
        self.proc: subprocess.Popen | None = None
        self.info: dict = {}

    @property
    def pid(self) -> int:
        return self.proc.pid if self.proc else 0

    ssh_config = property(lambda self: self.dir / "ssh_config")
    inventory = property(lambda self: self.dir / "inventory.yaml")
    known_hosts = property(lambda self: self.dir / "known_hosts")
    client_key = property(lambda self: self.dir / "id_ed25519")

    def start(self) -> SimProcess:
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "ready").unlink(missing_ok=True)
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        # output goes to files: a pipe nobody reads could block the child
        with open(self.dir / "sim.stdout", "wb") as out, open(self.dir / "sim.stderr", "wb") as err:
            self.proc = subprocess.Popen(self.args, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + self.ready_timeout
        ready = self.dir / "ready"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = (self.dir / "sim.stderr").read_text(errors="replace")
                raise RuntimeError(f"runbook sim exited with {self.proc.returncode}: {err}")
            try:
                if ready.read_text().strip() == str(self.proc.pid):
                    self.info = json.loads((self.dir / "lab.json").read_text())
                    return self
            except (OSError, ValueError):
                pass
            time.sleep(0.05)
        self.stop()
        raise TimeoutError(f"runbook sim did not become ready within {self.ready_timeout}s")

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM by pid, then SIGKILL; returns the exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        return self.proc.returncode

    def __enter__(self) -> SimProcess:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
