"""The simulated lab the benchmarks stand on: `python -m runbook.sim` started
as its own process (its own process group, so its CPU is apart from the
client's and it can be stopped without touching anything else), plus the
files the baselines need, derived from the inventory the sim writes.

    with Lab.start(nodes=48, workdir=tmp) as lab:
        lab.targets("ofed-version")   # [(name, address, port, user)]
        lab.inventory, lab.key, lab.known_hosts

BENCH_SIM_CMD overrides the command (the harness was first built against a
stand-in before runbook.sim existed; the stand-in is not shipped).

Bytecode: a lab started here, and every client this process starts after it, reads
and writes compiled bytecode in one cache (`bytecode_as_installed`), as an
installed package has it. This machine sets PYTHONDONTWRITEBYTECODE=1: with it,
every module edited since its last .pyc was compiled again at every start (~0.6
s of CPU per process for the whole package; bench/cold_start.py), a cost that
came and went with whatever had been edited.
"""

from __future__ import annotations

import os
import random
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
# The runbook under test (BENCH_STEPS overrides it, e.g. while steps/ is being edited).
STEPS = Path(os.environ.get("BENCH_STEPS", REPO / "steps"))
# Away from the sim's default (127.77.0.0), which a developer's own `runbook sim` may
# hold; a random /16 out of 127.201-250 so two benchmarks can run at once (a taken
# one is retried with another).
BASE_OCTETS = range(201, 251)
COMPLIANT = REPO / "runbook" / "sim" / "scenarios" / "empty.yaml"  # no faults
DEMO = REPO / "runbook" / "sim" / "scenarios" / "default.yaml"  # the demo's field faults
READY_NAMES = ("ready", ".ready", "READY")


def bytecode_as_installed() -> None:
    """This process's children (sims, clients, any checkout: the cache mirrors each
    source's own path) compile a module once and reuse it (see the module's docstring)."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ.setdefault("PYTHONPYCACHEPREFIX", str(Path(tempfile.gettempdir()) / "runbook-bench-pyc"))


class AddressTaken(Exception):
    """Another process listens on the chosen loopback range."""


class Lab:
    def __init__(self, proc: subprocess.Popen, directory: Path, nodes: int, log: Path):
        self.proc = proc
        self.dir = directory
        self.nodes = nodes
        self.log = log
        self.inventory = directory / "inventory.yaml"
        self.key = directory / "id_ed25519"
        self.known_hosts = directory / "known_hosts"
        self.ssh_config = directory / "ssh_config"

    # -- life cycle -----------------------------------------------------
    @classmethod
    def start(
        cls,
        nodes: int,
        workdir: Path,
        *,
        lifetime: float = 900,
        scenario: Path | None = COMPLIANT,
        timeout: float = 180,
        extra: list[str] | None = None,
        tag: str = "",
        time_scale: float | None = None,
        env: dict[str, str] | None = None,
    ) -> Lab:
        """`extra`: more `runbook sim` options (e.g. --drop-commands); `tag` names the lab's directory;
        `time_scale`: `runbook sim --time-scale` (0: the long tests without their modelled waits);
        `env`: variables the sim's process gets besides this one's (e.g. RUNBOOK_UVLOOP)."""
        if time_scale is not None:
            extra = [*(extra or []), "--time-scale", str(time_scale)]
        bytecode_as_installed()
        for attempt in range(5):
            try:
                return cls._start(
                    nodes,
                    workdir,
                    lifetime,
                    scenario,
                    timeout,
                    f"127.{random.choice(BASE_OCTETS)}.0.0",
                    extra or [],
                    tag,
                    env,
                )
            except AddressTaken:
                if attempt == 4:
                    raise
        raise AssertionError("unreachable")

    @classmethod
    def _start(
        cls,
        nodes: int,
        workdir: Path,
        lifetime: float,
        scenario: Path | None,
        timeout: float,
        base: str,
        extra: list[str],
        tag: str,
        env: dict[str, str] | None = None,
    ) -> Lab:
        directory = Path(workdir) / f"lab{nodes}-{Path(scenario).stem if scenario else 'default'}{tag}"
        directory.mkdir(parents=True, exist_ok=True)
        for n in READY_NAMES:
            (directory / n).unlink(missing_ok=True)
        cmd = os.environ.get("BENCH_SIM_CMD")
        argv = shlex.split(cmd) if cmd else [sys.executable, "-m", "runbook.sim"]
        argv += [
            "--nodes",
            str(nodes),
            "--dir",
            str(directory),
            "--lifetime",
            str(int(lifetime)),
            "--base-address",
            base,
            "--fresh",
        ]
        if scenario:
            argv += ["--scenario", str(scenario)]
        argv += extra
        log = directory / "sim.out"  # the sim keeps its own sim.log there
        with open(log, "ab") as out:
            proc = subprocess.Popen(
                argv,
                stdout=out,
                stderr=out,
                stdin=subprocess.DEVNULL,
                cwd=REPO,
                start_new_session=True,
                env={**os.environ, **env} if env else None,
            )
        lab = cls(proc, directory, nodes, log)
        t0 = time.time()
        while time.time() - t0 < timeout:
            if lab.ready():
                lab.startup_s = round(time.time() - t0, 2)
                return lab
            if proc.poll() is not None:
                text = log.read_text(errors="replace")
                # the sim's own message ("addresses in use: ...") or the OS's
                if "addresses in use" in text or "address already in use" in text:
                    log.unlink()
                    raise AddressTaken(base)
                raise RuntimeError(
                    f"the sim exited ({proc.returncode}) during start-up:\n"
                    + log.read_text(errors="replace")[-3000:]
                )
            time.sleep(0.2)
        lab.stop()
        raise RuntimeError(f"the sim did not get ready within {timeout:.0f}s (log: {log})")

    def ready(self) -> bool:
        return any((self.dir / n).exists() for n in READY_NAMES) and self.inventory.exists()

    def pids(self) -> list[int]:
        """The sim and any worker processes it started (their CPU is server CPU)."""
        try:
            p = psutil.Process(self.proc.pid)
            return [p.pid] + [c.pid for c in p.children(recursive=True)]
        except psutil.Error:
            return []

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)  # the group we started, nothing else
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            except ProcessLookupError:
                pass

    def __enter__(self) -> Lab:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- what the clients need ------------------------------------------
    def targets(self, step_id: str, steps_dir: Path = STEPS) -> list[tuple[str, str, int, str]]:
        """The hosts `runbook run --step STEP_ID` targets, with where to reach them."""
        if str(REPO) not in sys.path:  # this checkout's runbook, also where another one is installed
            sys.path.insert(0, str(REPO))
        from runbook.definition.loader import load_runbook
        from runbook.definition.targets import targets
        from runbook.inventory.load import host_vars, load_inventory

        inv = load_inventory(self.inventory)
        step = load_runbook(steps_dir).step(step_id)
        out = []
        for h in targets(step, inv):
            v = host_vars(inv, h)
            out.append(
                (
                    h,
                    str(v.get("ansible_host", h)),
                    int(v.get("ansible_port", 22)),
                    str(v.get("ansible_user", "root")),
                )
            )
        return out

    def command(self, step_id: str, steps_dir: Path = STEPS) -> str:
        """The step's verify command as it runs on the first targeted host."""
        from runbook.definition.loader import load_runbook
        from runbook.engine.hostrun import command_for
        from runbook.inventory.load import host_vars, load_inventory

        inv = load_inventory(self.inventory)
        step = load_runbook(steps_dir).step(step_id)
        first = self.targets(step_id, steps_dir)[0][0]
        return command_for(step.verify, host_vars(inv, first))

    def baseline_files(self, step_id: str) -> dict[str, Path]:
        """Host lists and configs for raw asyncssh, clush, pdsh and ansible."""
        out = self.dir / "baselines"
        out.mkdir(exist_ok=True)
        hosts = self.targets(step_id)
        files = {
            "hosts": out / "hosts.txt",
            "addrs": out / "addrs.txt",
            "ssh_config": out / "ssh_config",
            "ansible_inventory": out / "inventory.ini",
            "ansible_cfg": out / "ansible.cfg",
        }
        files["hosts"].write_text("".join(f"{n} {a} {p} {u}\n" for n, a, p, u in hosts))
        files["addrs"].write_text("".join(f"{a}\n" for _n, a, _p, _u in hosts))
        ports = {p for _n, _a, p, _u in hosts}
        users = {u for _n, _a, _p, u in hosts}
        per_host = ""
        if len(ports) > 1 or len(users) > 1:  # one block per address only when needed
            per_host = "".join(f"Host {a}\n  Port {p}\n  User {u}\n" for _n, a, p, u in hosts)
        # What the anchors harness uses for OpenSSH clients: curve25519 (what
        # asyncssh negotiates), no ControlMaster, no host-key checking.
        files["ssh_config"].write_text(
            per_host
            + f"""Host *
  Port {min(ports)}
  User {min(users)}
  IdentityFile {self.key}
  IdentitiesOnly yes
  IdentityAgent none
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  GlobalKnownHostsFile /dev/null
  CheckHostIP no
  UpdateHostKeys no
  LogLevel ERROR
  BatchMode yes
  ControlMaster no
  ControlPath none
  ConnectTimeout 60
  KexAlgorithms curve25519-sha256
"""
        )
        files["ansible_inventory"].write_text(
            "[nodes]\n" + "".join(f"{a} ansible_port={p} ansible_user={u}\n" for _n, a, p, u in hosts)
        )
        (out / "ansible_tmp").mkdir(exist_ok=True)
        files["ansible_cfg"].write_text(f"""[defaults]
host_key_checking = False
private_key_file = {self.key}
local_tmp = {out / "ansible_tmp"}
timeout = 60
deprecation_warnings = False
nocows = 1
[ssh_connection]
ssh_args = -F {files["ssh_config"]} -o ControlMaster=no -o ControlPersist=no
retries = 0
""")
        return files
